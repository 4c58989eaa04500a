import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, errorStatus } from '../errors/app-error.js';
import { isStoreUnavailable } from '../errors/store-unavailable.js';
import { answered } from './answered.js';
import type { Deps } from '../wiring/deps.js';
import { logOf } from './logging.js';
import { keyedHeaders } from './keyed-headers.js';
import { PATTERN_WORDS } from './schemas.js';
import { missingHost } from './host-required.js';

interface ValidationIssue {
  keyword?: string;
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/**
 * One issue per field, in words a caller can act on: Ajv says "must be equal to one of the allowed
 * values" without naming them, a union of constants gives one "must be equal to constant" per
 * member and a closing "must match a schema in anyOf", a pattern is quoted as a regular expression,
 * and a missing field "must have required property 'x'" after the field's own name.
 */
function readableIssues(issues: ValidationIssue[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const constsAt = new Map<string, unknown[]>();
  for (const v of issues) {
    const at = v.instancePath ?? '';
    if (v.keyword === 'const') {
      const values = constsAt.get(at) ?? [];
      values.push(v.params?.allowedValue);
      constsAt.set(at, values);
      continue;
    }
    if (v.keyword === 'anyOf' && constsAt.has(at)) {
      out.push({ ...v, message: `must be one of: ${constsAt.get(at)!.join(', ')}` });
      constsAt.delete(at);
      continue;
    }
    // The field named already holds the missing property's name: "querystring.from is required".
    if (v.keyword === 'required') {
      out.push({ ...v, message: 'is required' });
      continue;
    }
    if (v.keyword === 'minLength' && v.params?.limit === 1) {
      out.push({ ...v, message: 'must not be empty' });
      continue;
    }
    const words = v.keyword === 'pattern' ? PATTERN_WORDS.get(String(v.params?.pattern)) : undefined;
    if (words) {
      out.push({ ...v, message: words });
      continue;
    }
    if (v.keyword === 'enum' && Array.isArray(v.params?.allowedValues)) {
      out.push({ ...v, message: `must be one of: ${(v.params.allowedValues as unknown[]).join(', ')}` });
      continue;
    }
    out.push(v);
  }
  // A constant that was not part of a union (no anyOf after it).
  for (const [at, values] of constsAt) out.push({ keyword: 'const', instancePath: at, message: `must be ${values.join(' or ')}` });
  return out;
}

/** A body sent compressed, which the gateway never decodes (Node 20's Brotli decoder is unsafe: outbound-fetch.ts). */
export const encodedBodyError = (): AppError =>
  new AppError('unsupported_media_type', 'Request bodies are read as sent, never decompressed: send the JSON without Content-Encoding.', undefined, { 'accept-encoding': 'identity' });

/** The most fields a 400's details name. */
const MAX_FIELDS = 20;

/** Every non-2xx answer goes out in the contract's one error envelope. */
export function sendError(reply: FastifyReply, requestId: string, err: AppError): FastifyReply {
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  const error: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.details) error.details = err.details;
  // An error's message may repeat what the request sent (a path, a name): never to be sniffed as HTML.
  reply.header('x-content-type-options', 'nosniff');
  return reply.code(err.status).type('application/json; charset=utf-8').send({ error, meta: { requestId } });
}

/** The AppError an error answers as, and whether it is internal (a bug: logged, its message withheld). */
/** `contentEncoding`: the request's Content-Encoding header, for a body that would not parse. */
/** `query`: the parsed query string, to tell a parameter given twice (`?limit=5&limit=6`, an array) from one of the wrong type. */
export function classifyError(err: FastifyError | AppError | Error, contentEncoding?: string, query?: unknown): { appError: AppError; internal: boolean } {
  if (err instanceof AppError) return { appError: err, internal: false };
  const fe = err as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fe.validation) {
    const ctx = fe.validationContext ?? 'request';
    // Each offending field once, with its first issue (Ajv reports every failed keyword), and at
    // most MAX_FIELDS of them: a body of thousands of bad items names the first few.
    const fields: Array<{ field: string; message: string }> = [];
    const seen = new Set<string>();
    for (const v of readableIssues(fe.validation)) {
      const missing = v.params?.missingProperty as string | undefined;
      const extra = v.params?.additionalProperty as string | undefined;
      const path = (v.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
      const field = [ctx, path, missing ?? extra].filter(Boolean).join('.');
      if (seen.has(field)) continue;
      seen.add(field);
      const repeated = ctx === 'querystring' && !missing && !extra && path !== '' && !path.includes('.') && Array.isArray((query as Record<string, unknown> | undefined)?.[path]);
      fields.push({ field, message: extra ? 'is not an accepted field' : repeated ? 'is given more than once: give it once' : (v.message ?? 'is invalid') });
      if (fields.length === MAX_FIELDS) break;
    }
    const first = fields[0];
    return {
      appError: new AppError('invalid_request', first ? `${first.field} ${first.message}.` : 'The request is invalid.', { fields }),
      internal: false,
    };
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { appError: new AppError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.'), internal: false };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { appError: new AppError('payload_too_large', 'The body is larger than 1 MiB.'), internal: false };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { appError: new AppError('invalid_request', 'The body is empty; send a JSON object.', { fields: [{ field: 'body', message: 'is empty' }] }), internal: false };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { appError: new AppError('invalid_request', 'Content-Length does not match the body.'), internal: false };
  }
  const status = fe.statusCode ?? 500;
  if (status === 400 && (err instanceof SyntaxError || /JSON/i.test(err.message))) {
    // Bodies are read as sent, never decompressed (Node 20's Brotli decoder is unsafe: outbound-fetch.ts).
    if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity') {
      return { appError: encodedBodyError(), internal: false };
    }
    return { appError: new AppError('invalid_request', 'The body is not valid JSON.', { fields: [{ field: 'body', message: 'is not valid JSON' }] }), internal: false };
  }
  if (status >= 400 && status < 500) {
    const code: ErrorCode = status === 404 ? 'not_found' : status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'invalid_request';
    return { appError: new AppError(code, errorStatus[code] === status ? err.message : 'The request is invalid.'), internal: false };
  }
  if (isStoreUnavailable(err)) {
    return { appError: new AppError('service_unavailable', 'The gateway cannot use its storage right now; the call was not charged. Retry in a few seconds.', undefined, { 'retry-after': '1' }), internal: false };
  }
  return { appError: new AppError('internal_error', 'Something went wrong on our side; the call was not charged. Please retry.'), internal: true };
}

export function errorHandler(deps: Pick<Deps, 'metrics' | 'store'>) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const ce = request.headers['content-encoding'];
    const { appError, internal } = classifyError(err, typeof ce === 'string' ? ce : undefined, request.query);
    if (internal) logOf(request).error({ requestId: request.id, route: request.routeUrl, err }, 'unhandled error');
    // A charge whose outcome was lost with the storage: named, so that an operator can settle it with the caller.
    const maybeCharged = appError.details?.maybeCharged === true;
    const cause = maybeCharged ? ((err as { cause?: unknown }).cause ?? err) : err;
    if (maybeCharged) {
      logOf(request).warn({ requestId: request.id, accountId: request.auth?.accountId, route: request.routeUrl, err: cause }, 'charge outcome unknown: the storage was lost while charging this call, which may have been charged');
    }
    // Reported once for the whole outage (db/storage-outage.ts), not per call.
    const outage = appError.code === 'service_unavailable' ? deps.store.outage : undefined;
    outage?.failed(cause, request.server.log);
    keyedHeaders(request, reply);
    sendError(reply, request.id, appError);
    // Public routes are counted by their own onResponse hook.
    if (request.routeOptions.config?.public !== true) answered(deps, request, reply, outage !== undefined);
    return reply;
  };
}

export function notFoundHandler(deps: Pick<Deps, 'metrics'>) {
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    reply.header('x-request-id', request.id);
    sendError(reply, request.id, missingHost(request) ?? new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`));
    answered(deps, request, reply);
    return reply;
  };
}
