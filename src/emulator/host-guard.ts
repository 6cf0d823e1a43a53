import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { WebhookConfigError } from '../base/errors.js';
import { ApiError } from './http-io.js';

const HOST_NAME =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;

/**
 * The host names the emulator answers to besides localhost and IP addresses: the name it listens on, and the
 * names given at start. A web page can point a name of its own at 127.0.0.1 (DNS rebinding) and then read the
 * console and act on it as its own origin; its requests still carry that name in Host, which is how they are
 * told apart. An address is never rebound: a page sending it in Host was served from that address.
 */
export function allowedHostNames(listenHost: string, named: readonly string[] = []): ReadonlySet<string> {
  if (!Array.isArray(named)) {
    throw new WebhookConfigError(
      `emulator option allowedHosts must be a list of host names, got ${JSON.stringify(named)}.`,
    );
  }
  const names = new Set<string>([listenHost.toLowerCase()]);
  for (const name of named) {
    const host = typeof name === 'string' ? bracketed(name.toLowerCase()) : '';
    if (!HOST_NAME.test(host)) {
      throw new WebhookConfigError(
        `emulator option allowedHosts takes host names without scheme or port (e.g. "emulator.internal"), got ${JSON.stringify(name)}.`,
      );
    }
    names.add(host);
  }
  return names;
}

/**
 * Refuses, with 403 and what to do, a request to a host name not allowed, and a write from another site's
 * page: an Origin whose host is not allowed, or a browser's Sec-Fetch-Site: cross-site.
 */
export function guardRequest(req: IncomingMessage, allowed: ReadonlySet<string>): void {
  const host = req.headers.host;
  // HTTP/1.1 needs Host (Node refuses a request without it); an HTTP/1.0 client without one is not a browser.
  if (host !== undefined && !isAllowed(hostName(host), allowed)) {
    throw new ApiError(
      403,
      'host_not_allowed',
      `Host ${JSON.stringify(host)} is not allowed: the emulator answers requests to localhost, IP addresses ` +
        '(127.0.0.1, [::1]) and the hosts named at start, so a web page cannot reach it under a name of its own ' +
        `(DNS rebinding). To use this name, start it with allowedHosts: [${JSON.stringify(hostName(host))}] ` +
        `(CLI: --allowed-host ${hostName(host)}).`,
    );
  }
  if (req.method === 'GET' || req.method === 'HEAD') return;
  const origin = req.headers.origin;
  if (
    req.headers['sec-fetch-site'] === 'cross-site' ||
    (origin !== undefined && !allowedOrigin(origin, allowed))
  ) {
    throw new ApiError(
      403,
      'cross_origin_refused',
      `A ${req.method} from another site's page (Origin ${origin ?? 'not sent'}) is refused: the console acts ` +
        'only for its own page. If that page is yours, name its host with allowedHosts (CLI: --allowed-host).',
    );
  }
}

function allowedOrigin(origin: string, allowed: ReadonlySet<string>): boolean {
  try {
    return isAllowed(hostName(new URL(origin).host), allowed);
  } catch {
    // "null" (a sandboxed frame, a file) or garbage: no host that could be allowed.
    return false;
  }
}

function isAllowed(name: string, allowed: ReadonlySet<string>): boolean {
  if (name === 'localhost' || name.endsWith('.localhost') || allowed.has(name)) return true;
  return isIP(name) === 4 || (name.startsWith('[') && isIP(name.slice(1, -1)) === 6);
}

/** The name part of a Host header or URL host: `[::1]:4010` → `[::1]`, `Localhost:4010` → `localhost`. */
function hostName(host: string): string {
  const lower = host.toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1);
  return lower.split(':')[0] as string;
}

/** An IPv6 address as it appears in Host: in brackets. */
function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
