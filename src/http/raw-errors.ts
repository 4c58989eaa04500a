// Errors raised before a request reaches routing still answer in the error envelope with a request id:
// malformed percent-escapes in the path (Fastify's frameworkErrors), requests Node's HTTP parser
// rejects (the server's clientError: oversized headers, bad Content-Length, unknown methods), and
// those Node would answer itself with an empty body unless asked not to: CONNECT (which it closes
// unanswered), an `Expect:` it cannot meet, and HTTP/1.1 without Host (app.ts turns Node's check off
// and makes it in each route's first hook). Connections past SERVER_MAX_CONNECTIONS or
// SERVER_MAX_CONNECTIONS_PER_ADDRESS are answered by connection-cap.ts before any request is read.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { newRequestId } from '../domain/ids.js';
import { AppError } from '../errors/app-error.js';
import { sendError } from './error-handler.js';

/** The longest path parameter the router passes on to the route (app.ts). */
export const MAX_PARAM_LENGTH = 256;

/** Fastify's frameworkErrors: a malformed percent-escape, a path parameter too long for the router (and constraint errors). */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const err =
    error.code === 'FST_ERR_BAD_URL'
      ? new AppError('invalid_request', 'The URL holds a malformed percent-escape.', { fields: [{ field: 'path', message: 'is not a valid URL' }] })
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new AppError('invalid_request', `A path parameter is longer than ${MAX_PARAM_LENGTH} characters.`, { fields: [{ field: 'path', message: `holds a parameter longer than ${MAX_PARAM_LENGTH} characters` }] })
        : new AppError('invalid_request', 'The request is invalid.');
  sendError(reply, request.id, err);
}

const clientErrorAnswers: Record<string, { status: number; code: string; reason: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'invalid_request', reason: 'Request Header Fields Too Large', message: 'The request headers are too large.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'invalid_request', reason: 'Request Timeout', message: 'The request took too long to arrive.' },
};

/** How long a connection answered here stays open for the client to read the answer. */
const RAW_ANSWER_LINGER_MS = 1_000;

/** Fastify's clientErrorHandler: a raw HTTP answer on the socket, as no request object exists. */
export function clientErrorHandler(err: NodeJS.ErrnoException & { bytesParsed?: number }, socket: Socket): void {
  // A reset or an already-answered socket: nothing to say to anyone.
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy(err);
    return;
  }
  const known = clientErrorAnswers[err.code ?? ''];
  socket.end(rawAnswer(known?.status ?? 400, known?.reason ?? 'Bad Request', { code: known?.code ?? 'invalid_request', message: known?.message ?? 'The request is malformed and could not be read.' }));
  lingerThenClose(socket);
}

// end() only half-closes: a client that never closes its side (nor reads) kept the connection, and
// its place under SERVER_MAX_CONNECTIONS, until SERVER_CONNECTION_TIMEOUT_MS (2 minutes), so 1,024
// silent connections refused everyone else that long. A moment for the answer to be read (closing
// with unread input could reset it away), then it goes.
function lingerThenClose(socket: Socket): void {
  const linger = setTimeout(() => socket.destroy(), RAW_ANSWER_LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

/**
 * CONNECT (a proxy's tunnel, which the gateway is not) and an `Expect:` other than 100-continue
 * answer in the envelope: 404 `not_found` as any method the API does not have, and 417.
 */
export function shapeNodeAnswers(server: Server): void {
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    if (!socket.writable) return void socket.destroy();
    socket.end(rawAnswer(404, 'Not Found', { code: 'not_found', message: `No route CONNECT ${req.url ?? ''}.` }));
    lingerThenClose(socket);
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const { headers, body } = closingEnvelope({ code: 'invalid_request', message: `Expect: ${req.headers.expect ?? ''} cannot be met: only 100-continue is.`, details: { fields: [{ field: 'headers.expect', message: 'must be 100-continue' }] } });
    res.writeHead(417, headers);
    res.end(body);
  });
}

interface RawError {
  code: string;
  message: string;
  details?: unknown;
}

/** An error envelope with a new request id, and the headers of an answer that closes its connection. */
function closingEnvelope(error: RawError, extra: Record<string, string> = {}): { headers: Record<string, string>; body: string } {
  const requestId = newRequestId();
  const body = JSON.stringify({ error, meta: { requestId } });
  return {
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
      'Content-Length': String(Buffer.byteLength(body)),
      'X-Request-Id': requestId,
      ...extra,
      Connection: 'close',
    },
    body,
  };
}

/** An answer in the error envelope written straight to a socket (no request object exists), closing the connection. */
export function rawAnswer(status: number, reason: string, error: RawError, extra: Record<string, string> = {}): string {
  const { headers, body } = closingEnvelope(error, extra);
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${reason}\r\n${head}\r\n${body}`;
}
