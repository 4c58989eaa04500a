// The request counter and latency histogram are kept outside prom-client's labelled observe() for
// speed: their exposition must still be what a Counter and a Histogram would give.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMetrics } from '../../src/http/metrics.js';
import { startHarness } from '../helpers/harness.js';

/** The value of the exposition line that starts with `series`. */
const valueOf = (text: string, series: string) => text.split('\n').find((l) => l.startsWith(series + ' '))?.split(' ')[1];

test('requests are counted per route, method and status; latencies fall in cumulative buckets', async () => {
  const m = createMetrics();
  m.http.observe('/a', 'GET', 200, 0.0005);
  m.http.observe('/a', 'GET', 200, 0.003);
  m.http.observe('/a', 'GET', 404, 0.003);
  m.http.observe('/b/:id', 'POST', 201, 20);
  const text = await m.registry.metrics();
  const line = (series: string) => valueOf(text, series);
  assert.match(text, /# TYPE sdg_http_requests_total counter/);
  assert.match(text, /# TYPE sdg_http_request_duration_seconds histogram/);
  assert.equal(line('sdg_http_requests_total{route="/a",method="GET",status="200"}'), '2');
  assert.equal(line('sdg_http_requests_total{route="/a",method="GET",status="404"}'), '1');
  assert.equal(line('sdg_http_requests_total{route="/b/:id",method="POST",status="201"}'), '1');
  assert.equal(line('sdg_http_request_duration_seconds_bucket{le="0.001",route="/a",method="GET"}'), '1');
  assert.equal(line('sdg_http_request_duration_seconds_bucket{le="0.0025",route="/a",method="GET"}'), '1');
  assert.equal(line('sdg_http_request_duration_seconds_bucket{le="0.005",route="/a",method="GET"}'), '3');
  assert.equal(line('sdg_http_request_duration_seconds_bucket{le="+Inf",route="/a",method="GET"}'), '3');
  assert.equal(line('sdg_http_request_duration_seconds_count{route="/a",method="GET"}'), '3');
  assert.ok(Math.abs(Number(line('sdg_http_request_duration_seconds_sum{route="/a",method="GET"}')) - 0.0065) < 1e-12);
  // 20 s is beyond the last finite bucket: only +Inf counts it.
  assert.equal(line('sdg_http_request_duration_seconds_bucket{le="10",route="/b/:id",method="POST"}'), '0');
  assert.equal(line('sdg_http_request_duration_seconds_bucket{le="+Inf",route="/b/:id",method="POST"}'), '1');
});

// Each request is counted exactly once, wherever it is answered: the metering wrapper (keyed
// successes), the error handler (refusals before and inside a handler), the not-found handler, and
// the public routes' own hook. A double count or a missed path shows here.
test('every kind of answer is counted once in /metrics, and charged credits per route', async () => {
  const h = await startHarness('sqlite', { COSTS: JSON.stringify({ echoHello: 5 }) });
  try {
    const acct = await h.account({ credits: 1_000 });
    const key = { 'x-api-key': acct.apiKey };
    for (let i = 0; i < 3; i++) assert.equal((await h.app.inject({ url: '/echo/v1/hello', headers: key })).statusCode, 200);
    assert.equal((await h.app.inject({ url: '/echo/v1/hello' })).statusCode, 401);
    assert.equal((await h.app.inject({ url: '/api/v1/usage?limit=abc', headers: key })).statusCode, 400);
    assert.equal((await h.app.inject({ url: '/no/such/route', headers: key })).statusCode, 404);
    assert.equal((await h.app.inject({ url: '/healthz' })).statusCode, 200);
    const res = await h.app.inject({ url: '/metrics' });
    const line = (series: string) => valueOf(res.body, series);
    assert.equal(line('sdg_http_requests_total{route="/echo/v1/hello",method="GET",status="200"}'), '3');
    assert.equal(line('sdg_http_requests_total{route="/echo/v1/hello",method="GET",status="401"}'), '1');
    assert.equal(line('sdg_http_requests_total{route="/api/v1/usage",method="GET",status="400"}'), '1');
    assert.equal(line('sdg_http_requests_total{route="unknown",method="GET",status="404"}'), '1');
    assert.equal(line('sdg_http_requests_total{route="/healthz",method="GET",status="200"}'), '1');
    assert.equal(line('sdg_http_request_duration_seconds_count{route="/echo/v1/hello",method="GET"}'), '4');
    assert.equal(line('sdg_credits_charged_total{route="/echo/v1/hello"}'), '15');
    assert.match(res.body, /# TYPE sdg_credits_charged_total counter/);
  } finally {
    await h.close();
  }
});

// Postgres metering's own series (leases, waits, groups) reach /metrics; SQLite has none of them.
for (const dialect of ['sqlite', 'postgres'] as const) {
  test(`the meter's series on /metrics (${dialect})`, { skip: dialect === 'postgres' && !process.env.TEST_DATABASE_URL }, async () => {
    const h = await startHarness(dialect, { COSTS: JSON.stringify({ echoHello: 5 }) });
    try {
      const acct = await h.account({ credits: 1_000 });
      for (let i = 0; i < 30; i++) assert.equal((await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': acct.apiKey } })).statusCode, 200);
      const body = (await h.app.inject({ url: '/metrics' })).body;
      const line = (series: string) => valueOf(body, series);
      if (dialect === 'sqlite') {
        assert.doesNotMatch(body, /sdg_meter_/);
        return;
      }
      assert.match(body, /# TYPE sdg_meter_group_seconds histogram/);
      assert.equal(line('sdg_meter_group_charges_total'), '30');
      assert.equal(line('sdg_meter_group_seconds_count'), '30');
      assert.equal(line('sdg_meter_group_failures_total'), '0');
      assert.equal(line('sdg_meter_group_deadlocks_total'), '0');
      // The first call waits for the first slice, leased for it; the slices after it are mostly
      // leased ahead. A call that finds the slice spent while the next is being leased ahead waits
      // for that statement, not one of its own: so calls' own statements are at most the waits.
      const waited = Number(line('sdg_meter_calls_waited_total'));
      assert.ok(waited >= 1 && waited <= 3, `${waited} calls waited`);
      const own = Number(line('sdg_meter_lease_statements_total{purpose="call",outcome="granted"}'));
      assert.ok(own >= 1 && own <= waited, `${own} leases for waiting calls, ${waited} calls waited`);
      assert.ok(Number(line('sdg_meter_lease_statements_total{purpose="ahead",outcome="granted"}')) >= 1);
      assert.equal(line('sdg_meter_leased_accounts'), '1');
      const unheld = Number(line('sdg_meter_leased_unheld_credits'));
      const { reserved } = (await h.deps.store.db.selectFrom('accounts').select('reserved').where('id', '=', acct.accountId).executeTakeFirstOrThrow());
      assert.equal(unheld, Number(reserved), 'what the process holds unheld is what the account has reserved');
    } finally {
      await h.close();
    }
  });
}
