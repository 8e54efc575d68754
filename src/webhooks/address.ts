// Where webhooks may be sent: only public internet addresses (unless SVC_WEBHOOK_ALLOW_PRIVATE).
// Ranges come from ipaddr.js (every special-purpose range it knows is refused; only "unicast"
// passes); URLs are parsed by the WHATWG parser, which turns octal, hex, numeric and short IPv4
// spellings into dotted quads. The check runs when a URL is saved and again inside the connection:
// the resolved answer is checked as a whole (one private address refuses a mixed answer) and the
// socket is checked on the address it actually connected to, so DNS rebinding has no window.
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector } from 'undici';
import type { HostLookup } from '../context.js';
import { invalid } from '../platform/errors.js';

export const URL_MAX_LENGTH = 2048;

/** Thrown (or passed to the connection) when an address is not a public one. */
export class AddressRefusedError extends Error {
  readonly code = 'ADDRESS_REFUSED';
}

/** undefined for a public unicast address, otherwise the name of the range it is in. */
export function nonPublicRange(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'invalid';
  // ::ffff:a.b.c.d is judged as the IPv4 address it maps to.
  const range = ipaddr.process(bare).range();
  return range === 'unicast' ? undefined : range;
}

function refusal(host: string, address: string, range: string): string {
  const where = host === address ? address : `${host} resolves to ${address}`;
  return `${where}, which is a ${range} address; webhooks go to public internet addresses only`;
}

async function resolveAll(lookup: HostLookup, host: string): Promise<{ address: string; family: number }[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (net.isIP(bare)) return [{ address: bare, family: net.isIP(bare) }];
  return lookup(bare);
}

/**
 * Checks a webhook URL before it is saved and returns its normalized form. Refuses anything but
 * http and https, credentials in the URL, and (unless private addresses are allowed) a host with
 * any non-public address.
 */
export async function checkWebhookUrl(deps: { lookup: HostLookup; allowPrivate: boolean }, raw: string): Promise<string> {
  if (raw.length > URL_MAX_LENGTH) throw invalid(`the URL is longer than ${URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('the URL is not valid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('the URL must start with http:// or https://');
  if (url.username || url.password) throw invalid('the URL must not contain a user name or password');
  if (!url.hostname) throw invalid('the URL has no host');
  url.hash = '';
  if (!deps.allowPrivate) {
    let addresses: { address: string }[];
    try {
      addresses = await resolveAll(deps.lookup, url.hostname);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) throw invalid(`the host ${url.hostname} does not resolve`);
    for (const { address } of addresses) {
      const range = nonPublicRange(address);
      if (range) throw invalid(`the URL is refused: ${refusal(url.hostname, address, range)}`);
    }
  }
  return url.href;
}

/**
 * An undici Agent for webhook deliveries. Its connector resolves names through `lookup`, refuses
 * an answer with any non-public address, connects to the checked address and checks the connected
 * socket's remote address again. Environment proxy settings are never used.
 */
export function createWebhookAgent(deps: { lookup: HostLookup; allowPrivate: boolean; connections?: number }): Agent {
  const guardedLookup: LookupFunction = (hostname, options, callback) => {
    deps.lookup(hostname).then(
      (answers) => {
        if (answers.length === 0) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), '', 4);
        if (!deps.allowPrivate) {
          for (const a of answers) {
            const range = nonPublicRange(a.address);
            if (range) return callback(new AddressRefusedError(refusal(hostname, a.address, range)), '', 4);
          }
        }
        if (options.all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, answers);
        else callback(null, answers[0].address, answers[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 4),
    );
  };
  const base = buildConnector({ lookup: guardedLookup, timeout: 10_000 } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (opts, callback) => {
    const literal = opts.hostname.replace(/^\[|\]$/g, '');
    if (!deps.allowPrivate && net.isIP(literal)) {
      const range = nonPublicRange(literal);
      if (range) {
        callback(new AddressRefusedError(refusal(literal, literal, range)), null);
        return;
      }
    }
    base(opts, (error, socket) => {
      if (error || !socket) return callback(error ?? new Error('no connection'), null);
      const remote = socket.remoteAddress;
      const range = deps.allowPrivate ? undefined : remote ? nonPublicRange(remote) : 'unknown';
      if (range) {
        socket.destroy();
        return callback(new AddressRefusedError(refusal(opts.hostname, remote ?? '?', range)), null);
      }
      callback(null, socket);
    });
  };
  return new Agent({ connect, connections: deps.connections ?? 64, keepAliveTimeout: 10_000, pipelining: 1 });
}
