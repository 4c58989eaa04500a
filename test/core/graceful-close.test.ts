// A process that is closing (SIGTERM: serve.ts awaits app.close() before anything else stops) serves
// a request that arrives on a connection already open, as a proxy's kept-alive connections do, and
// answers it with Connection: close so the client takes its next request elsewhere. Before, Fastify
// answered such a request 503 with a body outside the contract's envelope, a failed call for a
// client behind the proxy during an ordinary restart.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';

/** Reads HTTP/1.1 answers off one socket, each as it completes (Content-Length framed). */
function answers(socket: Socket) {
  let buf = '';
  let ended = false;
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (buf += d));
  socket.on('end', () => (ended = true));
  const next = async (): Promise<{ status: number; headers: Record<string, string>; body: string }> => {
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const lines = buf.slice(0, end).split('\r\n');
        const headers = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const status = Number(lines[0]!.split(' ')[1]);
        const length = Number(headers['content-length'] ?? 0);
        if (buf.length >= end + 4 + length) {
          const body = buf.slice(end + 4, end + 4 + length);
          buf = buf.slice(end + 4 + length);
          return { status, headers, body };
        }
      }
      if (ended) throw new Error(`the connection ended with ${JSON.stringify(buf)} unread`);
      await once(socket, 'data');
    }
  };
  return { next, ended: () => ended };
}

let h: Harness;
let acct: TestAccount;
let port: number;
before(async () => {
  h = await startHarness('sqlite', { COSTS: JSON.stringify({ echoHello: 1 }) });
  acct = await h.account({ credits: 1_000 });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  port = (h.app.server.address() as { port: number }).port;
});
after(() => h.close());

test('closing: a request on a connection already open is served, with Connection: close, and charged as usual', async () => {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const read = answers(socket);
  const body = JSON.stringify({ name: 'during-close' });
  // A request in flight when the close begins: its headers are in (the server's 100 Continue says so),
  // its body not yet.
  socket.write(`POST /api/v1/api-keys HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-API-Key: ${acct.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
  assert.equal((await read.next()).status, 100);
  const closed = h.app.close();
  socket.write(body);
  const first = await read.next();
  assert.equal(first.status, 201, first.body);
  // The next request on the same connection arrives while the server is closing.
  socket.write(`GET /echo/v1/hello HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-API-Key: ${acct.apiKey}\r\n\r\n`);
  const second = await read.next();
  assert.equal(second.status, 200, second.body);
  assert.equal(second.headers.connection, 'close');
  assert.equal(second.headers['x-credits-charged'], '1', 'charged as usual');
  assert.equal(second.headers['x-credits-remaining'], '999');
  assert.match(second.body, /"data"/);
  // The server ends the connection after that answer, and the close completes.
  await closed;
  await until('the server to end the connection', 1_000, () => read.ended(), 10);
  socket.destroy();
});
