import { AppError } from '../errors/app-error.js';
import { SourceError } from '../sources/types.js';

/** Throws a data source's typed failure as the contract's error (docs/spec/contract.md, section 5). Anything else is rethrown. */
export function throwAsAppError(err: unknown, what: string): never {
  if (!(err instanceof SourceError)) throw err;
  switch (err.kind) {
    case 'not_found':
      throw new AppError('not_found', `No ${what} found.`);
    case 'protected':
      throw new AppError('protected_account', 'This account is protected: its tweets are not visible.');
    case 'suspended':
      // The contract has no code of its own for this; to a client a suspended account is not there.
      throw new AppError('not_found', `No ${what} found: the account is suspended.`, { reason: 'suspended' });
    case 'rate_limited': {
      const retry = err.resetAt ? secondsUntil(err.resetAt) : 60;
      throw new AppError('upstream_unavailable', `The data source is rate limiting us; retry in ${retry} s.`, { retryAfterSeconds: retry }, { 'retry-after': String(retry) });
    }
    case 'timeout':
      throw new AppError('upstream_timeout', 'The data source did not answer in time; retry later.');
    case 'bad_response':
      throw new AppError('upstream_error', 'The data source sent an answer we could not read; retry later.');
    case 'unavailable': {
      // A source paused by its circuit breaker knows when it will try again; an outage seen just now does not.
      if (!err.resetAt) throw new AppError('upstream_unavailable', 'The data source is unavailable; retry later.');
      const retry = secondsUntil(err.resetAt);
      throw new AppError('upstream_unavailable', `The data source is unavailable; retry in ${retry} s.`, { retryAfterSeconds: retry }, { 'retry-after': String(retry) });
    }
    case 'rejected':
      // The source refused us for a reason the operator must fix (its message names it, and never
      // holds a secret): not an outage, so no "retry later".
      throw new AppError('upstream_error', `The data source refused the request: ${err.message}.`);
  }
}

function secondsUntil(at: Date): number {
  return Math.max(1, Math.ceil((at.getTime() - Date.now()) / 1000));
}
