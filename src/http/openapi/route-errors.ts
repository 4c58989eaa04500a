// The error codes a keyed route can answer: those every keyed route shares (key check, rate limit,
// malformed input, a fault of ours, storage out of reach), those of a paid call, of a POST, and the route's own
// (config.errors). They become the route's error response schemas, so the OpenAPI document lists
// exactly these, and tests (validateResponses) fail on any error answer not listed.
import type { ErrorCode } from '../../errors/app-error.js';

const everyKeyedRoute: readonly ErrorCode[] = ['invalid_request', 'missing_api_key', 'invalid_api_key', 'rate_limited', 'internal_error', 'service_unavailable'];
const paid: readonly ErrorCode[] = ['insufficient_credits'];
// A POST reads a JSON body and may carry an Idempotency-Key.
const post: readonly ErrorCode[] = ['idempotency_conflict', 'payload_too_large', 'unsupported_media_type'];
// A DELETE takes no body and ignores a JSON one, but one that is not JSON, or too large, is refused
// as a POST's would be (Fastify reads a DELETE's body): listed, so that the document says so.
const del: readonly ErrorCode[] = ['payload_too_large', 'unsupported_media_type'];

export function routeErrors(route: { method: string; cost: number; own?: readonly ErrorCode[] | undefined }): ErrorCode[] {
  return [...everyKeyedRoute, ...(route.cost > 0 ? paid : []), ...(route.method === 'POST' ? post : route.method === 'DELETE' ? del : []), ...(route.own ?? [])];
}
