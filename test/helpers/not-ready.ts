// /readyz's 503: the state a probe reads, inside the contract's error envelope (src/routes/system/health.ts).
import assert from 'node:assert/strict';

type Answer = { statusCode: number; body: string; headers: Record<string, unknown> };
export type NotReadyState = { status: string; source?: string; reason?: string };

/** Asserts a 503 carrying both the state and the envelope (code, message, details = state, the request id), and returns the state. */
export function notReadyState(res: Answer): NotReadyState {
  assert.equal(res.statusCode, 503, res.body);
  const { error, meta, ...state } = JSON.parse(res.body) as NotReadyState & { error: { code: string; message: string; details: unknown }; meta: { requestId: string } };
  assert.equal(error.code, state.status === 'source unavailable' ? 'upstream_unavailable' : 'service_unavailable');
  assert.ok(error.message.length > 20, error.message);
  assert.deepEqual(error.details, state);
  assert.equal(meta.requestId, res.headers['x-request-id']);
  return state;
}
