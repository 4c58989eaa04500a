// Shared helpers for the X source tests: a fixture server on loopback, fixtures, schema checks.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '../..');
export const TOKEN = 'AAAAAAAAAAAAAAAAAAAAA-secret-bearer-token-1234567890';

// TypeBox checks `format` only for registered formats; the models use date-time.
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) && Number.isFinite(Date.parse(value)));
}

/** Asserts that `value` validates against `schema`, listing the first errors otherwise. */
export function assertSchema(schema: TSchema, value: unknown, label: string): void {
  if (Value.Check(schema, value)) return;
  const errors = [...Value.Errors(schema, value)].slice(0, 5).map((e) => `${e.path}: ${e.message}`);
  throw new Error(`${label} does not validate: ${errors.join('; ')}\n${JSON.stringify(value).slice(0, 600)}`);
}

export function fixture(name: string): unknown {
  return JSON.parse(readFileSync(path.join(here, 'fixtures', name), 'utf8')) as unknown;
}

export interface FixtureReply {
  status?: number;
  headers?: Record<string, string>;
  /** A fixture file name, a value to send as JSON, or raw text. */
  file?: string;
  json?: unknown;
  text?: string;
  /** Never answer (for timeouts). */
  hang?: boolean;
}

export interface SeenRequest {
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
}

export interface FixtureServer {
  baseUrl: string;
  seen: SeenRequest[];
  /** Requests whose connection the client closed before we answered (an aborted fetch). */
  readonly abandoned: number;
  /** Sets the answer for a path (exact pathname), or a function of the query that picks it. */
  on(pathname: string, reply: FixtureReply | ((query: URLSearchParams) => FixtureReply)): void;
  count(pathname: string): number;
  close(): Promise<void>;
}

/** A tiny HTTP server on 127.0.0.1 that answers each path with a configured fixture. */
export async function startFixtureServer(): Promise<FixtureServer> {
  const routes = new Map<string, FixtureReply | ((query: URLSearchParams) => FixtureReply)>();
  const seen: SeenRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  let abandoned = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    seen.push({ path: url.pathname, query: url.searchParams, authorization: req.headers.authorization });
    res.on('close', () => {
      if (!res.writableEnded) abandoned += 1;
    });
    const route = routes.get(url.pathname);
    const reply = typeof route === 'function' ? route(url.searchParams) : route;
    if (!reply) {
      res.writeHead(599, { 'content-type': 'text/plain' }).end(`no fixture for ${url.pathname}`);
      return;
    }
    if (reply.hang) {
      hanging.add(res);
      return;
    }
    const body =
      reply.text ?? JSON.stringify(reply.file !== undefined ? fixture(reply.file) : reply.json === undefined ? {} : reply.json);
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    get abandoned() {
      return abandoned;
    },
    on: (pathname, reply) => void routes.set(pathname, reply),
    count: (pathname) => seen.filter((r) => r.path === pathname).length,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
