import { Type } from '@sinclair/typebox';
import { NumericId } from '../../http/schemas.js';

export const IdParams = Type.Object({ id: NumericId }, { additionalProperties: false });

// X handles are [A-Za-z0-9_]{1,15}; Bluesky handles are domain names. Both fit this; '@' does not.
export const UsernameParams = Type.Object(
  { username: Type.String({ pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}$', description: 'handle without the at-sign' }) },
  { additionalProperties: false },
);
