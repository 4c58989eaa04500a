// The OpenAPI document as a contract: the committed docs/openapi.json is what the gateway serves, and
// every operation says its cost, its tags, its answers by $ref with their codes and headers, and
// gives examples that match their schemas.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { DOCUMENT_PATH, renderOpenapi } from '../../scripts/openapi.js';
import { defaultCosts } from '../../src/config/costs.js';
import { errorStatus, type ErrorCode } from '../../src/errors/app-error.js';
import { backends } from '../helpers/backends.js';
import { json, startHarness, type Harness } from '../helpers/harness.js';

type Json = Record<string, unknown>;
interface Doc {
  servers: { url: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json>; responses: Record<string, Json>; headers: Record<string, Json>; parameters: Record<string, Json> };
}

const committed = readFileSync(DOCUMENT_PATH, 'utf8');
const doc = JSON.parse(committed) as Doc;

function operations(d: Doc): { method: string; path: string; op: Json }[] {
  return Object.entries(d.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ method, path, op })));
}

/** Follows a local $ref ("#/components/…") to what it names. */
function deref<T = Json>(d: Doc, value: Json): T {
  const ref = value.$ref;
  if (typeof ref !== 'string') return value as T;
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, key) => (node as Json)[key], d) as T;
}

const hasRef = (v: unknown): boolean => (Array.isArray(v) ? v.some(hasRef) : typeof v === 'object' && v !== null ? '$ref' in v || Object.values(v).some(hasRef) : false);

describe('the OpenAPI document', () => {
  test('docs/openapi.json is the document the gateway serves (run npm run openapi after changing a route)', async () => {
    const served = await renderOpenapi();
    assert.ok(served === committed, 'docs/openapi.json differs from the served document: run `npm run openapi` and commit the result');
  });

  test('names the schemas a client needs, and refers to them', () => {
    for (const name of ['Tweet', 'SocialProfile', 'Community', 'Export', 'Batch', 'BatchItem', 'WatchlistEntry', 'ApiKey', 'NewApiKey', 'Plan', 'UsageRecord', 'Balance', 'DownloadLink', 'CrawlStatus', 'ErrorEnvelope', 'ErrorCode']) {
      assert.ok(doc.components.schemas[name], `components.schemas.${name}`);
      assert.ok(committed.includes(`"#/components/schemas/${name}"`), `${name} is referred to`);
    }
    assert.deepEqual((doc.components.schemas.ErrorCode!.enum as string[]).slice().sort(), Object.keys(errorStatus).sort());
    assert.ok(doc.servers.length > 0);
  });

  test('every operation: summary, description with its cost, x-credit-cost, declared tags, described parameters with examples', () => {
    const ops = operations(doc);
    assert.ok(ops.length >= 22, `${ops.length} operations`);
    const tags = new Map(doc.tags.map((t) => [t.name, t.description]));
    for (const { method, path, op } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      const id = op.operationId as string;
      assert.ok(id in defaultCosts, `${where}: operationId ${id} has a cost in src/config/costs.ts`);
      assert.equal(op['x-credit-cost'], defaultCosts[id], `${where}: x-credit-cost`);
      assert.match(op.summary as string, /\S/, `${where}: summary`);
      assert.match(op.description as string, defaultCosts[id]! > 0 ? new RegExp(`\\*\\*Cost:\\*\\* ${defaultCosts[id]} credits`) : /\*\*Cost:\*\* free/, `${where}: cost in the description`);
      assert.ok((op.description as string).split('**Cost:**')[0]!.trim().length > 20, `${where}: a description besides the cost`);
      assert.ok(Array.isArray(op.tags) && op.tags.length > 0, `${where}: tags`);
      for (const t of op.tags as string[]) assert.ok(tags.get(t), `${where}: tag ${t} is declared with a description`);
      const params = ((op.parameters as Json[] | undefined) ?? []).map((p) => deref(doc, p));
      for (const p of params) {
        assert.match((p.description as string | undefined) ?? '', /\S/, `${where}: parameter ${p.name} has a description`);
        assert.notEqual(p.example, undefined, `${where}: parameter ${p.name} has an example`);
      }
      if (method === 'post') {
        assert.ok(params.some((p) => p.name === 'Idempotency-Key' && p.in === 'header'), `${where}: Idempotency-Key`);
        const body = ((op.requestBody as Json).content as Record<string, Json>)['application/json']!;
        assert.notEqual(body.example, undefined, `${where}: a request body example`);
      }
    }
  });

  test('every answer: described, by $ref, errors with the codes of their status, headers documented', () => {
    for (const { method, path, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${path}`;
      const responses = op.responses as Record<string, Json>;
      const statuses = Object.keys(responses);
      for (const s of ['400', '401', '429', '500']) assert.ok(statuses.includes(s), `${where}: documents ${s}`);
      if ((op['x-credit-cost'] as number) > 0) assert.ok(statuses.includes('402'), `${where}: documents 402`);
      if (method === 'post') for (const s of ['409', '413', '415']) assert.ok(statuses.includes(s), `${where}: documents ${s}`);
      for (const [status, raw] of Object.entries(responses)) {
        const r = deref(doc, raw);
        assert.ok(typeof r.description === 'string' && r.description.length > 5 && r.description !== 'Default Response', `${where} ${status}: description`);
        const headers = r.headers as Record<string, Json>;
        assert.ok(headers['X-Request-Id'], `${where} ${status}: X-Request-Id`);
        if (status.startsWith('2')) {
          for (const h of ['X-Credits-Charged', 'X-Credits-Remaining', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) assert.ok(headers[h], `${where} ${status}: ${h}`);
          if (method === 'post') assert.ok(headers['Idempotent-Replayed'], `${where} ${status}: Idempotent-Replayed`);
          const media = (r.content as Record<string, Json>)['application/json']!;
          assert.ok(hasRef(media.schema), `${where} ${status}: its schema refers to named schemas`);
          assert.notEqual(media.example, undefined, `${where} ${status}: an example`);
          continue;
        }
        assert.match(raw.$ref as string, /^#\/components\/responses\//, `${where} ${status}: a shared error response`);
        if (status === '429') assert.ok(headers['Retry-After'], `${where} 429: Retry-After`);
        const media = (r.content as Record<string, Json>)['application/json']!;
        const [envelope, narrowed] = (media.schema as { allOf: Json[] }).allOf;
        assert.equal(envelope!.$ref, '#/components/schemas/ErrorEnvelope');
        const codes = (((narrowed!.properties as Json).error as Json).properties as Record<string, Json>).code!.enum as ErrorCode[];
        assert.ok(codes.length > 0);
        for (const c of codes) assert.equal(String(errorStatus[c]), status, `${where}: ${c} is answered with ${errorStatus[c]}, not ${status}`);
        assert.deepEqual(Object.keys(media.examples as Json).sort(), codes.slice().sort(), `${where} ${status}: an example per code`);
      }
    }
  });

  test('every example matches its schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: false });
    addFormats.default(ajv);
    // The document's schemas as one resource, so that "#/components/…" refs resolve.
    ajv.addSchema({ $id: 'doc', components: JSON.parse(JSON.stringify(doc.components).replaceAll('"#/components/', '"doc#/components/')) });
    const check = (where: string, schema: Json, value: unknown) => {
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as Json);
      assert.ok(validate(value), `${where}: ${ajv.errorsText(validate.errors)}`);
    };
    let checked = 0;
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      for (const ex of (schema.examples as unknown[] | undefined) ?? []) {
        check(`components.schemas.${name}`, { $ref: `#/components/schemas/${name}` }, ex);
        checked++;
      }
    }
    const medias: [string, Json][] = [];
    for (const { method, path, op } of operations(doc)) {
      for (const p of ((op.parameters as Json[] | undefined) ?? []).map((x) => deref(doc, x))) medias.push([`${method} ${path} ${p.name}`, p]);
      const body = op.requestBody as Json | undefined;
      if (body) medias.push([`${method} ${path} body`, (body.content as Record<string, Json>)['application/json']!]);
      for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
        medias.push([`${method} ${path} ${status}`, (deref(doc, r).content as Record<string, Json>)['application/json']!]);
      }
    }
    for (const [where, media] of medias) {
      const values = media.example !== undefined ? [media.example] : Object.values((media.examples as Record<string, { value: unknown }> | undefined) ?? {}).map((e) => e.value);
      for (const v of values) {
        check(where, media.schema as Json, v);
        checked++;
      }
    }
    assert.ok(checked > 100, `${checked} examples checked`);
  });
});

for (const backend of backends()) {
  describe(`the served document follows the configuration (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { COSTS: '{"getTweet":7,"echoHello":3}', PUBLIC_BASE_URL: 'https://api.example.org/' });
    });
    after(() => h.close());

    test('costs from COSTS, the server from PUBLIC_BASE_URL', async () => {
      const served = json<Doc>(await h.app.inject({ url: '/openapi.json' }));
      assert.deepEqual(served.servers.map((s) => s.url), ['https://api.example.org']);
      const tweet = served.paths['/social/v1/tweets/{id}']!.get!;
      assert.equal(tweet['x-credit-cost'], 7);
      assert.match(tweet.description as string, /\*\*Cost:\*\* 7 credits/);
      const hello = served.paths['/echo/v1/hello']!.get!;
      assert.equal(hello['x-credit-cost'], 3);
      // A paid route can answer 402; so it is documented.
      assert.ok((hello.responses as Json)['402']);
    });
  });
}
