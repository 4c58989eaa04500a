import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type SQLite from 'better-sqlite3';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestStore, type TestStore } from '../helpers/backends.js';

// Rerunnable jobs skip their savepoints; one that throws part-way must still leave nothing behind,
// and the turn's other jobs must each take effect once.
describe('SQLite group commit: rerunnable jobs', () => {
  let ts: TestStore;
  let sqlite: SQLite.Database;
  let grouped: NonNullable<TestStore['store']['grouped']>;
  before(async () => {
    ts = await createTestStore('sqlite');
    await migrateToLatest(ts.store);
    sqlite = ts.store.sqlite!;
    grouped = ts.store.grouped!;
  });
  after(() => ts.dispose());

  const put = (key: string) => sqlite.prepare('insert into settings (key, value) values (?, ?)').run(key, 'x');
  const keys = () => sqlite.prepare('select key from settings order by key').pluck().all();

  test('a throw part-way undoes only that job; the others commit, the plain one runs once', async () => {
    let plainRuns = 0;
    const results = await Promise.allSettled([
      grouped(() => (put('a1'), 'a'), { rerunnable: true }),
      grouped(() => {
        plainRuns++;
        put('p1');
        return 'p';
      }),
      grouped(
        () => {
          put('bad1');
          throw new Error('part-way');
        },
        { rerunnable: true },
      ),
      grouped(() => (put('c1'), 'c'), { rerunnable: true }),
    ]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['a', 'p', 'part-way', 'c'],
    );
    assert.equal(plainRuns, 1);
    assert.deepEqual(keys(), ['a1', 'c1', 'p1']);
  });

  test('a turn of rerunnable jobs alone commits them all', async () => {
    const r = await Promise.all([grouped(() => put('d1').changes, { rerunnable: true }), grouped(() => put('e1').changes, { rerunnable: true })]);
    assert.deepEqual(r, [1, 1]);
    assert.deepEqual(keys(), ['a1', 'c1', 'd1', 'e1', 'p1']);
  });
});
