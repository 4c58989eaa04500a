import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample } from '../../src/sources/demo/sample.js';
import { SimulatedConditions } from '../../src/sources/simulated.js';
import type { DataSource } from '../../src/sources/types.js';
import { NOW, rejectsWith } from './demo-helpers.js';

const demo = new DemoSource({ seed: 9, now: () => new Date(NOW) });
const sample = demoSample(demo, new Date(NOW));
const userId = sample.userIds[0]!;
const tweetId = sample.tweetIds[0]!;

function calls(src: DataSource): Array<[string, () => Promise<unknown>]> {
  return [
    ['getUserByUsername', () => src.getUserByUsername(sample.usernames[0]!)],
    ['getUserById', () => src.getUserById(userId)],
    ['getTweet', () => src.getTweet(tweetId)],
    ['getRetweeters', () => src.getRetweeters(tweetId, { limit: 5 })],
    ['getUserTweets', () => src.getUserTweets(userId, { limit: 5 })],
    ['getCommunity', () => src.getCommunity(sample.communityIds[0]!)],
  ];
}

test('without conditions it answers exactly like the wrapped source', async () => {
  const sim = new SimulatedConditions(demo);
  assert.equal(sim.name, 'demo');
  const direct = calls(demo);
  for (const [i, [name, call]] of calls(sim).entries()) assert.deepEqual(await call(), await direct[i]![1](), name);
  await rejectsWith(sim.getTweet('1'), 'not_found', 'errors of the source pass through');
});

test('faultRate 1 always fails with unavailable; 0 never', async () => {
  const failing = new SimulatedConditions(demo, { faultRate: 1 });
  for (let round = 0; round < 5; round++) for (const [name, call] of calls(failing)) await rejectsWith(call(), 'unavailable', name);
  const fine = new SimulatedConditions(demo, { faultRate: 0, random: () => 0 });
  for (const [, call] of calls(fine)) await call();
});

test('faults follow the injected randomness', async () => {
  const draws = [0.1, 0.9, 0.49, 0.5];
  const sim = new SimulatedConditions(demo, { faultRate: 0.5, random: () => draws.shift() ?? 1 });
  await rejectsWith(sim.getTweet(tweetId), 'unavailable');
  await sim.getTweet(tweetId);
  await rejectsWith(sim.getTweet(tweetId), 'unavailable');
  await sim.getTweet(tweetId);
});

test('the rate limit trips with resetAt at the end of the minute, then lifts', async () => {
  let now = Date.parse('2025-06-01T12:00:10.000Z');
  const sim = new SimulatedConditions(demo, { rateLimitPerMinute: 3, now: () => new Date(now) });
  for (let i = 0; i < 3; i++) await sim.getUserById(userId);
  const e = await rejectsWith(sim.getTweet(tweetId), 'rate_limited');
  assert.equal(e.resetAt?.toISOString(), '2025-06-01T12:01:00.000Z');
  await rejectsWith(sim.getCommunity(sample.communityIds[0]!), 'rate_limited', 'all calls share the budget');
  now = Date.parse('2025-06-01T12:01:00.000Z');
  for (let i = 0; i < 3; i++) await sim.getTweet(tweetId);
  await rejectsWith(sim.getTweet(tweetId), 'rate_limited');
});

test('latency delays each answer', async () => {
  const sim = new SimulatedConditions(demo, { latencyMs: 40 });
  const t0 = performance.now();
  await sim.getTweet(tweetId);
  assert.ok(performance.now() - t0 >= 35);
});
