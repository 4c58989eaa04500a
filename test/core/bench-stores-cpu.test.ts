// bench/stores-cpu.ts: while the servers are measured on Postgres + Redis, the stores' processes run
// on wrk's CPU (at real-time priority when asked), and are put back as they were after. Changing them needs root
// and the machine's stores: the second test runs where TEST_DATABASE_URL is set as root (CI).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import { chrtArgs, pinStoresTo, storeProcesses } from '../../bench/stores-cpu.js';

test("chrtArgs turns chrt's report into the arguments that set the policy again", () => {
  assert.deepEqual(chrtArgs("pid 1's current scheduling policy: SCHED_OTHER\npid 1's current scheduling priority: 0\n"), ['-o', '-p', '0']);
  assert.deepEqual(chrtArgs("pid 1's current scheduling policy: SCHED_RR\npid 1's current scheduling priority: 10\n"), ['-r', '-p', '10']);
  assert.deepEqual(chrtArgs("pid 1's current scheduling policy: SCHED_BATCH\npid 1's current scheduling priority: 0\n"), ['-b', '-p', '0']);
  assert.throws(() => chrtArgs("pid 1's current scheduling policy: SCHED_DEADLINE\n"), /does not restore/);
  assert.throws(() => chrtArgs('nothing'), /does not restore/);
});

const asRoot = process.getuid?.() === 0;
const state = (pid: string) => ({
  policy: /policy: (\w+)/.exec(execFileSync('chrt', ['-p', pid]).toString())?.[1],
  cpus: /list: (.+)/.exec(execFileSync('taskset', ['-c', '-p', pid]).toString())?.[1]?.trim(),
});

test("the stores' processes run on wrk's CPU at real-time priority, then as before", { skip: !process.env.TEST_DATABASE_URL || !asRoot || availableParallelism() < 2 }, async () => {
  const pids = storeProcesses().map((p) => p.pid);
  assert.ok(pids.length > 0, 'no Postgres or Redis process found');
  const before = new Map(pids.map((p) => [p, state(p)]));
  const restore = await pinStoresTo('0', availableParallelism(), true);
  try {
    for (const pid of pids) {
      if (!before.get(pid)) continue;
      let now;
      try {
        now = state(pid);
      } catch {
        continue; // a backend that ended meanwhile
      }
      assert.deepEqual(now, { policy: 'SCHED_RR', cpus: '0' }, `process ${pid}`);
    }
  } finally {
    await restore();
  }
  for (const [pid, was] of before) {
    let now;
    try {
      now = state(pid);
    } catch {
      continue;
    }
    assert.deepEqual(now, was, `process ${pid} after`);
  }
});
