// Postgres statements with parameters are prepared once per connection (src/db/connect.ts): the
// metering's group statement is not parsed and planned again for every group. Needs TEST_DATABASE_URL.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/db/connect.js';
import { createPostgresSchema } from '../helpers/backends.js';

const pgUrl = process.env.TEST_DATABASE_URL;

describe('prepared statements (postgres)', { skip: !pgUrl }, () => {
  let store: Store;
  let schema: { url: string; drop(): Promise<void> };
  const dataDir = mkdtempSync(join(tmpdir(), 'sdg-prep-'));
  before(async () => {
    schema = await createPostgresSchema(pgUrl!);
    // One connection: every query below runs on the session whose prepared statements are listed.
    store = openStore({ databaseUrl: schema.url, dataDir, poolSize: 1 });
  });
  after(async () => {
    await store.close();
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const prepared = async () => (await sql<{ statement: string }>`select statement from pg_prepared_statements where statement like '%sdg_probe%'`.execute(store.db)).rows.map((r) => r.statement);

  test('a text with parameters is prepared once and reused with other values; one without stays unprepared', async () => {
    const run = async (n: number) => (await sql<{ v: number }>`select ${n}::int + 1 as v, 'sdg_probe' as tag`.execute(store.db)).rows[0]!.v;
    assert.equal(await run(1), 2);
    assert.equal(await run(41), 42, 'the prepared statement runs with the new value');
    const other = (await sql<{ v: string }>`select 'sdg_probe' || ${'x'}::text as v`.execute(store.db)).rows[0]!.v;
    assert.equal(other, 'sdg_probex');
    // Several statements in one text, without parameters: only the simple protocol accepts them.
    await sql.raw(`select 'sdg_probe_raw'; select 2`).execute(store.db);
    const texts = await prepared();
    assert.equal(texts.length, 2, `one prepared statement per text with parameters: ${texts.join(' | ')}`);
    assert.ok(texts.every((t) => !t.includes('sdg_probe_raw')));
  });
});
