/**
 * The first error in `err`'s `cause` chain (itself included) that `match` accepts. Libraries wrap
 * what failed (viem's BaseError, @atproto/api's XRPCError, fetch's TypeError around a dispatcher's
 * error), so what decides the answer is often a few causes down. Bounded: a chain can be circular.
 */
export function findCause<T extends Error = Error>(err: unknown, match: (e: Error) => e is T): T | undefined;
export function findCause(err: unknown, match: (e: Error) => boolean): Error | undefined;
export function findCause(err: unknown, match: (e: Error) => boolean): Error | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) if (match(e)) return e;
  return undefined;
}
