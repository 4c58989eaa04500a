import { Type } from '@sinclair/typebox';
import type { ErrorCode } from '../../errors/app-error.js';
import { HANDLE_PATTERN, NumericId } from '../../http/schemas.js';

/** What a read from the data source can answer besides the errors of every keyed route. */
export const sourceErrors: readonly ErrorCode[] = ['not_found', 'upstream_error', 'upstream_unavailable', 'upstream_timeout'];
/** A read of a protected account's tweets. */
export const protectedErrors: readonly ErrorCode[] = [...sourceErrors, 'protected_account'];

export const IdParams = Type.Object({ id: NumericId }, { additionalProperties: false });

export const UsernameParams = Type.Object(
  {
    username: Type.String({
      pattern: HANDLE_PATTERN,
      description: 'handle without the at-sign: an X username or a Bluesky handle (case-insensitive)',
      examples: ['ada_builds'],
    }),
  },
  { additionalProperties: false },
);
