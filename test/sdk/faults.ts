// Fault injection for the SDK's tests: a TCP proxy that loses the gateway's answer after the gateway
// has given it (so whatever it charged stays charged), a server that reads requests and never
// answers, an HTTP stub, and a port nothing listens on.
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

const listen = (s: Server | HttpServer) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)));

/** A proxy to a local port; while `drop(head)` says so for a request, its answer is lost on the way back. */
export class LosingProxy {
  /** The head (request line and headers) of every request that went through. */
  readonly requests: string[] = [];
  /** Which requests lose their answer; `lose` below counts them down. */
  drop: (head: string) => boolean = () => false;
  /** How many more answers to lose (of the requests `drop` picks). */
  lose = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  url = '';

  constructor(private readonly target: number) {
    this.server = createServer((client) => {
      const upstream = createConnection(target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
      }
      let losing = false;
      client.on('data', (chunk: Buffer) => {
        const text = chunk.toString('latin1');
        if (/^[A-Z]+ \//.test(text)) {
          const head = text.split('\r\n\r\n')[0]!;
          this.requests.push(head);
          losing = this.lose > 0 && this.drop(head);
          if (losing) this.lose--;
        }
        upstream.write(chunk);
      });
      // The gateway answered (and charged, if it charges): the answer goes nowhere, the connection drops.
      upstream.on('data', (chunk: Buffer) => {
        if (!losing) return void client.write(chunk);
        client.destroy();
        upstream.destroy();
      });
      upstream.on('end', () => client.end());
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      upstream.on('error', drop);
      client.on('error', drop);
    });
  }

  async start(): Promise<this> {
    this.url = `http://127.0.0.1:${await listen(this.server)}`;
    return this;
  }

  /** Requests that went through whose request line matches. */
  count(line: RegExp): number {
    return this.requests.filter((h) => line.test(h.split('\r\n')[0]!)).length;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A server that reads each request and never answers (a hung gateway); `heads` holds what came. */
export async function silentServer(): Promise<{ url: string; heads: string[]; close(): Promise<void> }> {
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (d: Buffer) => {
      const text = d.toString('latin1');
      if (/^[A-Z]+ \//.test(text)) heads.push(text.split('\r\n\r\n')[0]!);
    });
    socket.on('error', () => undefined);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    heads,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export type StubHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** An HTTP server answering with `handler` (the request's body read first). */
export async function stub(handler: StubHandler): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => handler(req, res, body));
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers the gateway's error envelope. */
export function envelope(res: ServerResponse, status: number, code: string, message: string, details?: Record<string, unknown>, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_stub', ...headers });
  res.end(JSON.stringify({ error: { code, message, ...(details ? { details } : {}) }, meta: { requestId: 'req_stub' } }));
}

/** A loopback port nothing listens on (a refused connection). */
export function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
