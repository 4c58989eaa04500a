// The process's logger: pino, with what must never be logged redacted.
//
// Fastify runs without a logger of its own (`logger: false`) and is handed this one as `app.log`
// after it is built. With a logger, Fastify makes a child logger for every request and listens for
// every response's end (measured: about 5 µs a request, a fifth of a small request's cost), for
// request logging we turn off anyway. So there is no `request.log`: the few request-level lines are
// written here with the request id as a field, and Fastify's own per-request diagnostics (a reply
// sent twice, a broken response stream) are not logged; its server-level lines (listening, onClose
// errors) still are.
import type { FastifyRequest } from 'fastify';
import { destination, pino, stdSerializers, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type Log = Logger;

export function appLogger(level: string, stream?: DestinationStream): Log {
  const options: LoggerOptions = {
    level,
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    serializers: {
      // Query strings may hold signatures of download links: log the path only.
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, path: req.url.split('?')[0], requestId: req.id }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      err: stdSerializers.err,
    },
  };
  // Standard output written synchronously: pino's asynchronous default flushes at exit in a loop that
  // retries every error, so with the reader of a pipe gone (a log shipper that died, `| head`) the
  // exit after SIGTERM waited forever, the forced exit too. A synchronous write meets EPIPE at once,
  // and pino then stops writing. The request path logs nothing, so no call waits on it.
  return pino(options, stream ?? destination({ dest: 1, sync: true }));
}

/** The logger of the app that received `request`. */
export function logOf(request: FastifyRequest): Log {
  return request.server.log as Log;
}
