// Common start-up mistakes, told in one line that names the variable to fix and what to do, instead
// of a stack trace: a Postgres database that does not exist, does not answer or accepts no writes,
// a DATA_DIR that is not a writable directory, a full disk, a port already in use, a store migrated
// by a newer release.
import type { Config } from '../config/config.js';
import { SchemaNewerError } from '../db/migrate.js';
import { ApiRoleLockedError } from '../db/api-role-lock.js';

interface SysError {
  code?: unknown;
  syscall?: unknown;
  hostname?: unknown;
  path?: unknown;
  address?: unknown;
  port?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error and what it wraps (cause, AggregateError members), outermost first. */
function chain(err: unknown): SysError[] {
  const out: SysError[] = [];
  const walk = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 4) return;
    const s = e as SysError;
    out.push(s);
    if (Array.isArray(s.errors)) for (const x of s.errors) walk(x, depth + 1);
    walk(s.cause, depth + 1);
  };
  walk(err, 0);
  return out;
}

/** host:port/database of a Postgres URL, never its password. */
function where(databaseUrl: string): string {
  try {
    const u = new URL(databaseUrl);
    return `${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return 'the configured server';
  }
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

export function explainStartupError(err: unknown, config: Pick<Config, 'host' | 'port' | 'metricsPort' | 'dataDir' | 'databaseUrl' | 'exports'> | undefined): string | undefined {
  if (!config) return undefined;
  for (const e of chain(err)) {
    if (e instanceof ApiRoleLockedError) return e.message;
    if (e instanceof SchemaNewerError) {
      const store = config.databaseUrl ? `DATABASE_URL: the schema at ${where(config.databaseUrl)}` : `DATA_DIR ${config.dataDir}: the store`;
      return (
        `${store} was migrated by a newer release (it has ${e.unknown.join(', ')}; this release ends at ${e.latest}): ` +
        `run the newer release, or first take the schema back with the newer release's \`sdg migrate --to ${e.latest}\`.`
      );
    }
    const code = typeof e.code === 'string' ? e.code : '';
    const message = typeof e.message === 'string' ? e.message : '';
    // 'bind': the same error in a cluster worker, whose primary listens for it.
    if (e.syscall === 'listen' || e.syscall === 'bind') {
      // A worker or scheduler listens on METRICS_PORT only (serve.ts); the error names the port.
      const [name, port] = config.metricsPort !== undefined && config.metricsPort !== config.port && e.port === config.metricsPort ? ['METRICS_PORT', config.metricsPort] : ['PORT', config.port];
      if (code === 'EADDRINUSE') return `${name} ${port} is already in use on ${config.host}: stop the program that holds it, or set ${name} to a free port.`;
      if (code === 'EACCES') return `${name} ${port} needs privileges this user does not have: set ${name} to 1024 or above (and put a proxy in front).`;
      if (code === 'EADDRNOTAVAIL') return `HOST ${config.host} is not an address of this machine: set HOST to one of its addresses (127.0.0.1, 0.0.0.0).`;
    }
    // HOST a name that does not resolve (a typo such as 127.0.0.l): the listen's lookup failed.
    if (e.syscall === 'getaddrinfo' && e.hostname === config.host && (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL')) {
      return `HOST ${config.host} does not resolve to an address (${code}): set HOST to an address of this machine (127.0.0.1, 0.0.0.0) or a name that resolves to one.`;
    }
    if (config.databaseUrl) {
      const db = where(config.databaseUrl);
      if (code === '42704' && /configuration parameter/.test(message)) {
        return `DATABASE_URL's options set a parameter Postgres does not know (${message}): fix the options in DATABASE_URL (for a schema: options=-c search_path=NAME).`;
      }
      if (code === '3D000') return `DATABASE_URL names a database that does not exist (${db}): create it (createdb), or fix DATABASE_URL.`;
      if (code === '28P01' || code === '28000') return `DATABASE_URL: Postgres at ${db} refused the user or password: fix the credentials in DATABASE_URL.`;
      if (code === '3F000') return `DATABASE_URL names a schema that does not exist (${db}; its search_path, if options sets one): create it, or fix DATABASE_URL.`;
      if (code === '25006') {
        return `DATABASE_URL: Postgres at ${db} accepts no writes (a standby, or default_transaction_read_only is on): point DATABASE_URL at the primary.`;
      }
      if (code === '53100') return `DATABASE_URL: Postgres at ${db} is out of disk space (53100): free space on its server.`;
      if (/does not support SSL connections/.test(message)) {
        return `DATABASE_URL asks for TLS (sslmode) but Postgres at ${db} does not offer it: enable ssl on the server, or drop sslmode from DATABASE_URL on a network you trust.`;
      }
      if (/^(SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|CERT_HAS_EXPIRED|ERR_TLS_CERT_ALTNAME_INVALID)$/.test(code)) {
        return `DATABASE_URL: Postgres at ${db} presented a certificate this process does not trust (${code}): give its CA in NODE_EXTRA_CA_CERTS, or fix the host name in DATABASE_URL.`;
      }
      if (UNREACHABLE.has(code) || /timeout expired|Connection terminated/i.test(message)) {
        return `DATABASE_URL: Postgres at ${db} does not answer (${code || message}): start it, or fix the host and port in DATABASE_URL.`;
      }
    } else {
      const path = typeof e.path === 'string' ? e.path : '';
      const inData = path !== '' && (path.startsWith(config.dataDir) || path.startsWith(config.exports.dir));
      if (inData && (code === 'EEXIST' || code === 'ENOTDIR')) {
        return `DATA_DIR ${config.dataDir} is a file, not a directory: point DATA_DIR at a directory (it is created if missing).`;
      }
      if (inData && (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')) {
        return `DATA_DIR ${config.dataDir} is not writable by this user (${code}): make it writable, or point DATA_DIR at a directory that is.`;
      }
      if (code === 'SQLITE_FULL' || (inData && code === 'ENOSPC')) return `DATA_DIR ${config.dataDir}: the disk is full (${code}): free space on it, or point DATA_DIR elsewhere.`;
      if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_READONLY_DIRECTORY') {
        return `DATA_DIR ${config.dataDir}: the database file cannot be opened for writing (${code}): make the directory and its files writable by this user.`;
      }
    }
  }
  return undefined;
}
