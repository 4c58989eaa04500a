// The request counter and latency histogram are kept outside prom-client's labelled observe() for
// speed: their exposition must still be what a Counter and a Histogram would give.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMetrics } from '../../src/http/metrics.js';

test('requests are counted per route, method and status; latencies fall in cumulative buckets', async () => {
  const m = createMetrics();
  m.http.observe('/a', 'GET', 200, 0.0005);
  m.http.observe('/a', 'GET', 200, 0.003);
  m.http.observe('/a', 'GET', 404, 0.003);
  m.http.observe('/b/:id', 'POST', 201, 20);
  const text = await m.registry.metrics();
  const line = (prefix: string) => text.split('\n').find((l) => l.startsWith(prefix + ' '))?.split(' ')[1];
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
