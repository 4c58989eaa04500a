// Export retention on both object stores: past EXPORT_RETENTION_DAYS the file is removed and the
// record kept, marked expired; the download (and a link given before) answers 404 export_expired;
// younger exports are untouched; a sweep that dies between marking and removing is finished by the
// next one; EXPORT_RETENTION_DAYS=0 keeps everything; the scheduler role runs the sweep.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sweepExpiredExports } from '../../src/exports/export-retention.js';
import type { ObjectStore } from '../../src/objects/object-store.js';
import { startBackground } from '../../src/wiring/background.js';
import { startLocalS3, type LocalS3 } from '../../deploy/local-s3.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, type TestAccount } from '../helpers/harness.js';
import { BASE, call } from '../bulk/helpers.js';
import { completedExport, downloadLink, objectsHarness, type ExportRec, type ObjectsHarness, type StoreKind } from './helpers.js';

const DAY = 86_400_000;
const silent = { info() {}, warn() {}, error() {} };

let s3: LocalS3;
before(async () => {
  s3 = await startLocalS3();
});
after(() => s3.close());

for (const backend of backends()) {
  for (const kind of ['local', 's3'] as StoreKind[]) {
    describe(`export retention (${backend}, ${kind} store)`, () => {
      let o: ObjectsHarness;
      let a: TestAccount;
      const objects = () => o.h.deps.bulk.objects;
      const keyOf = async (id: string) => (await o.h.deps.store.db.selectFrom('exports').select('object_key').where('id', '=', id).executeTakeFirstOrThrow()).object_key;
      const sweep = (now = o.clock.now()) => sweepExpiredExports({ db: o.h.deps.store.db, objects: objects(), retentionDays: o.h.config.exports.retentionDays, now });
      const record = async (id: string) => json<{ data: ExportRec }>(await call(o.h, a, 'GET', `${BASE}/exports/${id}`)).data;

      before(async () => {
        o = await objectsHarness(backend, kind === 's3' ? s3 : undefined, { EXPORT_RETENTION_DAYS: '7' });
        a = await o.h.account();
      });
      after(() => o.close());

      test('after 7 days the file is removed, the record stays marked expired, the download says it expired', async () => {
        const old = await completedExport(o, a, o.userIds[0]!);
        const oldKey = await keyOf(old.id);
        const before = await downloadLink(o, a, old.id);
        assert.ok(await objects().stat(oldKey));
        assert.equal(old.expiredAt, null);

        // Six days later: nothing expires.
        o.clock.advance(6 * DAY);
        assert.deepEqual(await sweep(), { expired: 0, removed: 0 });
        const young = await completedExport(o, a, o.userIds[1]!);

        // Seven days and a minute after the first completed: it expires, the younger one does not.
        o.clock.advance(DAY + 60_000);
        assert.deepEqual(await sweep(), { expired: 1, removed: 1 });
        assert.equal(await objects().stat(oldKey), undefined, 'the file is gone');
        assert.ok(await objects().stat(await keyOf(young.id)), 'the younger file stays');

        const rec = await record(old.id);
        assert.equal(rec.status, 'completed');
        assert.equal(rec.expiredAt, o.clock.now().toISOString());
        assert.equal(rec.sha256, old.sha256, 'the record keeps what it said');
        assert.equal((await record(young.id)).expiredAt, null);

        const res = await call(o.h, a, 'GET', `${BASE}/exports/${old.id}/download`);
        assert.equal(res.statusCode, 404);
        const err = errorOf(res);
        assert.equal(err.code, 'export_expired');
        assert.match(err.message, /expired/);
        assert.equal(err.details?.expiredAt, rec.expiredAt);
        // The younger one still downloads.
        await downloadLink(o, a, young.id);

        if (kind === 'local') {
          // A gateway link given before the expiry (and still within its own life) says so too.
          const u = new URL(before.url);
          o.clock.ms = Date.parse(before.expiresAt) - 1_000;
          const file = await o.h.app.inject({ method: 'GET', url: u.pathname + u.search });
          o.clock.ms = Date.parse(rec.expiredAt!);
          assert.equal(file.statusCode, 404);
          assert.equal(errorOf(file).code, 'export_expired');
        }
        // A second sweep finds nothing more to do.
        assert.deepEqual(await sweep(), { expired: 0, removed: 0 });

        // latest gives the newest export that can be downloaded: not one retention removed.
        const db = o.h.deps.store.db;
        await db.updateTable('exports').set({ completed_at: o.clock.now().toISOString() }).where('id', '=', old.id).execute();
        assert.equal(json<{ data: ExportRec }>(await call(o.h, a, 'GET', `${BASE}/exports/latest`)).data.id, young.id, 'the expired one, though completed later, is left out');
        await db.updateTable('exports').set({ expired_at: o.clock.now().toISOString() }).where('id', '=', young.id).execute();
        const none = await call(o.h, a, 'GET', `${BASE}/exports/latest`);
        assert.equal(none.statusCode, 404);
        assert.match(errorOf(none).message, /every completed one has expired/);
        await db.updateTable('exports').set({ expired_at: null }).where('id', '=', young.id).execute();
      });

      test('a sweep that dies between marking and removing is finished by the next one', async () => {
        const e = await completedExport(o, a, o.userIds[2]!);
        const key = await keyOf(e.id);
        o.clock.advance(8 * DAY);
        const failing: ObjectStore = Object.assign(Object.create(objects()) as ObjectStore, {
          delete: async () => {
            throw new Error('store unreachable');
          },
        });
        await assert.rejects(sweepExpiredExports({ db: o.h.deps.store.db, objects: failing, retentionDays: 7, now: o.clock.now() }), /store unreachable/);
        // Marked: the download already says it expired, though the file is still there.
        assert.ok((await record(e.id)).expiredAt);
        assert.equal(errorOf(await call(o.h, a, 'GET', `${BASE}/exports/${e.id}/download`)).code, 'export_expired');
        assert.ok(await objects().stat(key));
        const r = await sweep();
        assert.ok(r.removed >= 1, JSON.stringify(r));
        assert.equal(await objects().stat(key), undefined);
      });

      test('the scheduler role sweeps; EXPORT_RETENTION_DAYS=0 keeps every export', async () => {
        const e = await completedExport(o, a, o.userIds[3]!);
        const key = await keyOf(e.id);
        o.clock.advance(30 * DAY);
        assert.deepEqual(await sweepExpiredExports({ db: o.h.deps.store.db, objects: objects(), retentionDays: 0, now: o.clock.now() }), { expired: 0, removed: 0 });
        assert.ok(await objects().stat(key));

        const lines: Array<{ msg: string; obj: Record<string, unknown> }> = [];
        const log = { ...silent, info: (obj: object, msg: string) => void lines.push({ msg, obj: obj as Record<string, unknown> }) };
        const bg = await startBackground(o.h.deps, { roles: ['scheduler'], log });
        try {
          const deadline = Date.now() + 10_000;
          while ((await record(e.id)).expiredAt === null || (await objects().stat(key)) !== undefined) {
            assert.ok(Date.now() < deadline, 'the scheduler expired the export');
            await new Promise((r) => setTimeout(r, 50));
          }
          // Files deleted for good are said in the log, with how many.
          while (!lines.some((l) => l.msg === 'expired exports removed')) {
            assert.ok(Date.now() < deadline, 'logged');
            await new Promise((r) => setTimeout(r, 20));
          }
          const line = lines.find((l) => l.msg === 'expired exports removed')!;
          assert.ok(Number(line.obj.removed) >= 1 && line.obj.job === 'export_retention', JSON.stringify(line.obj));
        } finally {
          await bg.stop();
        }
      });
    });
  }
}
