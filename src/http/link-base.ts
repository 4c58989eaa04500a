// The base URL of links the gateway hands out (export downloads). PUBLIC_BASE_URL wins; without it the
// request's Host is used only when it is on the allow-list (ALLOWED_HOSTS, by default the configured
// HOST:PORT and localhost), so a forged Host header cannot put a signed link on someone else's host.
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/config.js';

export function linkBase(config: Pick<Config, 'publicBaseUrl' | 'allowedHosts'>): (request: FastifyRequest) => string {
  if (config.publicBaseUrl) {
    const fixed = config.publicBaseUrl.replace(/\/+$/, '');
    return () => fixed;
  }
  const allowed = new Set(config.allowedHosts.map((h) => h.toLowerCase()));
  const fallback = config.allowedHosts[0]!;
  return (request) => {
    const host = request.host.toLowerCase();
    // request.protocol reads X-Forwarded-Proto under TRUST_PROXY, as sent: `javascript` made a
    // `javascript://` link. Only the two a link can have.
    const scheme = request.protocol === 'https' ? 'https' : 'http';
    return `${scheme}://${allowed.has(host) ? host : fallback}`;
  };
}
