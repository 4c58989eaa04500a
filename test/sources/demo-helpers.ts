// Shared fixtures of the demo-network tests: a source with a movable clock, user finders, error checks.
import assert from 'node:assert/strict';
import '../../src/domain/formats.js';
import { DemoSource, type DemoSourceOptions } from '../../src/sources/demo/demo-source.js';
import { SourceError, type SourceErrorKind } from '../../src/sources/types.js';
import { type UserCore, userCore } from '../../src/sources/demo/users.js';

export const NOW = Date.parse('2025-06-01T12:00:00.000Z');
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export interface Clocked {
  source: DemoSource;
  clock: { ms: number };
}

/** A demo source whose clock the test moves. */
export function clocked(options: Omit<DemoSourceOptions, 'now'> = {}, start = NOW): Clocked {
  const clock = { ms: start };
  return { source: new DemoSource({ ...options, now: () => new Date(clock.ms) }), clock };
}

/** The first `count` users (from index `from`) matching `pred`. */
export function findUsers(source: DemoSource, pred: (u: UserCore) => boolean, count: number, from = 0): UserCore[] {
  const out: UserCore[] = [];
  for (let i = from; i < source.net.userCount && out.length < count; i++) {
    const u = userCore(source.net, i);
    if (pred(u)) out.push(u);
  }
  assert.equal(out.length, count, 'enough matching users');
  return out;
}

export async function rejectsWith(p: Promise<unknown>, kind: SourceErrorKind, label = ''): Promise<SourceError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof SourceError, `${label}: expected a SourceError, got ${String(e)}`);
    assert.equal(e.kind, kind, `${label}: ${e.message}`);
    return e;
  }
  assert.fail(`${label}: expected SourceError(${kind}), but the call succeeded`);
}

export function byNewest(a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): boolean {
  return a.createdAt > b.createdAt || (a.createdAt === b.createdAt && BigInt(a.id) > BigInt(b.id));
}
