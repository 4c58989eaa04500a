// Shared helpers for the wallet tests: loopback servers only.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import ganache from 'ganache';

export const DETERMINISTIC_KEY = '0x4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d' as const;
export const DETERMINISTIC_ADDRESS = '0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1';
export const GANACHE_CHAIN_ID = 1337;

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function unusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** In-process ganache on loopback: deterministic wallet, chain id 1337, quiet. */
export async function startGanache(): Promise<RunningServer> {
  const server = ganache.server({
    wallet: { deterministic: true },
    chain: { chainId: GANACHE_CHAIN_ID },
    logging: { quiet: true },
  });
  await server.listen(0, '127.0.0.1');
  const { port } = server.address();
  const url = `http://127.0.0.1:${port}`;
  await waitForRpc(url);
  return { url, port, close: () => server.close() };
}

/** Polls eth_chainId until the endpoint answers (at most 10 s). */
export async function waitForRpc(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      if (response.ok) {
        const body = (await response.json()) as { result?: unknown };
        if (typeof body.result === 'string') return;
      }
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`RPC at ${url} did not come up`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Accepts TCP connections and never answers. */
export async function startSilentServer(): Promise<RunningServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface RpcCall {
  method: string;
  params: unknown[];
  path: string;
}

export type FakeAnswer =
  | { result: unknown }
  | { error: { code: number; message: string } }
  | { httpStatus: number; body: string }
  | { hang: true };

/**
 * A scripted JSON-RPC server: `handler` decides each answer; every call is recorded in `calls`.
 */
export async function startFakeRpc(
  handler: (call: RpcCall) => FakeAnswer,
): Promise<RunningServer & { calls: RpcCall[] }> {
  const calls: RpcCall[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; method: string; params?: unknown[] };
      const call: RpcCall = { method: body.method, params: body.params ?? [], path: req.url ?? '/' };
      calls.push(call);
      const answer = handler(call);
      if ('hang' in answer) return;
      if ('httpStatus' in answer) {
        res.writeHead(answer.httpStatus, { 'content-type': 'text/plain' });
        res.end(answer.body);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    calls,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
