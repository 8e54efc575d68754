// The client's address: the one function every per-address limit, the request log and analytics
// use. The connection's peer is the client unless it is one of SVC_TRUSTED_PROXIES; then the
// forwarding header that SVC_TRUSTED_PROXY_HEADER names is read from the right, skipping hops that
// are trusted proxies too, and the rightmost untrusted hop is the client. Hops left of it were
// written by the client itself and are never believed. Only one header is read: a proxy that
// maintains X-Forwarded-For passes a client's own Forwarded header through untouched, and the other
// way round, so reading both would let a client choose its address.
import ipaddr from 'ipaddr.js';

export type ProxyHeader = 'x-forwarded-for' | 'forwarded';

/** A parsed SVC_TRUSTED_PROXIES entry: an address range. */
export type TrustedRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface ClientAddressSettings {
  trustedProxies: readonly TrustedRange[];
  proxyHeader: ProxyHeader;
}

/**
 * Parses SVC_TRUSTED_PROXIES: addresses or CIDR ranges, separated by commas or spaces. Throws an
 * Error naming the first bad entry.
 */
export function parseTrustedProxies(text: string | undefined): TrustedRange[] {
  const out: TrustedRange[] = [];
  for (const entry of (text ?? '').split(/[\s,]+/).filter(Boolean)) {
    try {
      if (entry.includes('/')) out.push(ipaddr.parseCIDR(entry));
      else {
        const address = ipaddr.parse(entry);
        out.push([address, address.kind() === 'ipv4' ? 32 : 128]);
      }
    } catch {
      throw new Error(`"${entry}" is not an IP address or a CIDR range (such as 10.0.0.0/8 or 2001:db8::/32)`);
    }
  }
  return out;
}

/** An address in one form (IPv4-mapped IPv6 as IPv4), or undefined when it is not an IP address. */
function parse(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(text)) return undefined;
  const address = ipaddr.parse(text);
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

function isTrusted(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly TrustedRange[]): boolean {
  return ranges.some(([base, bits]) => base.kind() === address.kind() && address.match(base as never, bits));
}

/** The hops a forwarding header lists, leftmost (the claimed client) first; undefined for an entry that is no address. */
export function forwardedHops(header: ProxyHeader, value: string): (string | undefined)[] {
  if (header === 'x-forwarded-for') return value.split(',').map((hop) => hopAddress(hop.trim()));
  // RFC 7239: elements separated by commas, each pairs separated by semicolons; for= may be quoted,
  // an IPv6 address is bracketed, and either may carry a port.
  return splitOutsideQuotes(value, ',').map((element) => {
    const pair = splitOutsideQuotes(element, ';').find((p) => /^\s*for\s*=/i.test(p));
    if (!pair) return undefined;
    let node = pair.slice(pair.indexOf('=') + 1).trim();
    if (node.startsWith('"') && node.endsWith('"') && node.length >= 2) node = node.slice(1, -1).replace(/\\(.)/g, '$1');
    return hopAddress(node);
  });
}

/** "1.2.3.4", "1.2.3.4:80", "[2001:db8::1]", "[2001:db8::1]:80", "2001:db8::1" → the address text. */
function hopAddress(node: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(node);
  const candidate = bracketed ? bracketed[1] : /^[\d.]+:\d+$/.test(node) ? node.slice(0, node.lastIndexOf(':')) : node;
  const address = parse(candidate);
  return address?.toString();
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && quoted && i + 1 < text.length) {
      current += ch + text[++i];
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (ch === separator && !quoted) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts;
}

/**
 * The client address of a connection whose peer is `peer`, given the forwarding header's value:
 * the peer itself unless it is a trusted proxy; else the rightmost hop that is not a trusted proxy.
 * A hop that is no address (a proxy wrote "unknown", an obfuscated Forwarded node) stops the walk
 * at the trusted hop right of it, which is then the address limits count.
 */
export function resolveClientAddress(settings: ClientAddressSettings, peer: string | undefined, forwarded: string | undefined): string {
  const peerAddress = peer ? parse(peer) : undefined;
  if (!peerAddress) return peer || 'unknown';
  if (settings.trustedProxies.length === 0 || !isTrusted(peerAddress, settings.trustedProxies) || !forwarded) return peerAddress.toString();
  const hops = forwardedHops(settings.proxyHeader, forwarded);
  let client = peerAddress.toString();
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    if (hop === undefined) return client;
    client = hop;
    if (!isTrusted(parse(hop)!, settings.trustedProxies)) return client;
  }
  return client;
}
