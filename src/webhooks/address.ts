// Where webhooks may be sent: only public internet addresses (unless SVC_WEBHOOK_ALLOW_PRIVATE).
// Ranges come from ipaddr.js (every special-purpose range it knows is refused; only "unicast"
// passes); URLs are parsed by the WHATWG parser, which turns octal, hex, numeric and short IPv4
// spellings into dotted quads. The check runs when a URL is saved and again inside the connection:
// the resolved answer is checked as a whole (one private address refuses a mixed answer) and the
// socket is checked on the address it actually connected to, so DNS rebinding has no window.
//
// IPv6 ranges that carry an IPv4 address are judged by where the traffic ends up:
// - ::ffff:0:0/96 (IPv4-mapped) is the IPv4 address itself (the socket connects over IPv4).
// - 64:ff9b::/96 (NAT64, the well-known prefix; the last 32 bits), 2002::/16 (6to4; bits 16-47) and
//   2001::/32 (Teredo; the server in bits 32-63, the client in the last 32 bits XOR 0xffffffff) pass
//   only when every IPv4 they embed is public: a translator or relay then hands the traffic to a
//   public internet host, which is no different from any global IPv6 address, and an IPv6-only
//   server behind DNS64 sees every IPv4-only receiver as 64:ff9b::<IPv4>. An embedded private IPv4
//   would make a local translator or tunnel reach into the private network, so it is refused.
// - ::/96 (IPv4-compatible, deprecated since RFC 4291; a kernel with a sit tunnel still sends it to
//   the IPv4 address), ::ffff:0:0:0/96 (IPv4-translated, RFC 6145) and 64:ff9b:1::/48 (local-use
//   NAT64, RFC 8215: its layout is the local network's choice, so the IPv4 it reaches cannot be
//   known here) are refused whatever they embed.

import type { LookupFunction } from 'node:net';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Agent, buildConnector } from 'undici';
import type { HostLookup } from '../context.js';
import { invalid } from '../platform/errors.js';

export const URL_MAX_LENGTH = 2048;

/** Thrown (or passed to the connection) when an address is not a public one. */
export class AddressRefusedError extends Error {
  readonly code = 'ADDRESS_REFUSED';
}

/**
 * undefined for a public unicast address, otherwise the name of the range it is in, worded to follow
 * "which is a …" and precede "address" (e.g. "6to4 address embedding 10.0.0.1, a private").
 */
export function nonPublicRange(address: string): string | undefined {
  const parsed = parseAddress(address);
  if (!parsed) return 'invalid';
  if (parsed.kind() === 'ipv4') return ipv4Range(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  // ::ffff:a.b.c.d is judged as the IPv4 address it maps to.
  if (v6.isIPv4MappedAddress()) return ipv4Range(v6.toIPv4Address());
  const range = v6.range();
  if (range === 'unspecified' || range === 'loopback') return range;
  const bytes = v6.toByteArray();
  const ipv4At = (offset: number, flip = 0) => new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((b) => b ^ flip));
  const embedding = (name: string, embedded: ipaddr.IPv4, role = '') => {
    const inner = ipv4Range(embedded);
    return inner ? `${name} address ${role ? `whose ${role} is` : 'embedding'} ${embedded.toString()}, a ${inner}` : undefined;
  };
  if (v6.match(IPV4_COMPATIBLE)) return embedding('ipv4Compatible', ipv4At(12)) ?? 'ipv4Compatible';
  if (v6.match(NAT64_LOCAL_USE)) return 'rfc8215';
  if (range === 'rfc6052') return embedding('rfc6052', ipv4At(12));
  if (range === '6to4') return embedding('6to4', ipv4At(2));
  if (range === 'teredo') return embedding('teredo', ipv4At(4), 'server') ?? embedding('teredo', ipv4At(12, 0xff), 'client');
  return range === 'unicast' ? undefined : range;
}

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
const NAT64_LOCAL_USE = ipaddr.parseCIDR('64:ff9b:1::/48');

function ipv4Range(address: ipaddr.IPv4): string | undefined {
  const range = address.range();
  return range === 'unicast' ? undefined : range;
}

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  // A zone (fe80::1%eth0) only says which interface; the address decides.
  const bare = withoutBrackets(address).replace(/%.*$/, '');
  try {
    const family = net.isIP(bare);
    if (family === 4) return ipaddr.IPv4.parse(bare);
    // ipaddr.js reads "::a.b.c.d" as IPv4-mapped; the WHATWG parser spells it in hex (::7f00:1) first.
    if (family === 6) return ipaddr.IPv6.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
  } catch {
    // not an address
  }
  return undefined;
}

/** An IPv6 host as URLs spell it ([::1]) without its one pair of brackets. */
function withoutBrackets(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1');
}

function refusal(host: string, address: string, range: string): string {
  const where = host === address ? address : `${host} resolves to ${address}`;
  return `${where}, which is a ${range} address; webhooks go to public internet addresses only`;
}

async function resolveAll(lookup: HostLookup, host: string): Promise<{ address: string; family: number }[]> {
  const bare = withoutBrackets(host);
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
 * socket's remote address again. Environment proxy settings are never used. undici is loaded here,
 * on first use: loading it (its fetch, its HTTP parser) added ~3.5 MB to an idle server's RSS (2.5 MB heap).
 */
export async function createWebhookAgent(deps: { lookup: HostLookup; allowPrivate: boolean; connections?: number }): Promise<Agent> {
  const { Agent, buildConnector } = await import('undici');
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
