// The client address of an HTTP request: src/platform/client-address.ts decides, from the
// connection's peer and the forwarding header; this reads both off the request.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { type ClientAddressSettings, resolveClientAddress } from '../platform/client-address.js';

/**
 * The client address of this request: what every per-address limit, the request log and analytics
 * use. "unknown" without a socket (requests made in-process).
 */
export function clientAddress(c: Context, settings: ClientAddressSettings): string {
  const bindings = c.env as { incoming?: IncomingMessage; server?: { incoming?: IncomingMessage } } | undefined;
  const incoming = bindings?.server?.incoming ?? bindings?.incoming;
  const peer = incoming?.socket?.remoteAddress;
  if (!peer) return 'unknown';
  // Without trusted proxies no header is looked at (the common case: one cheap string check).
  if (settings.trustedProxies.length === 0) return peer.startsWith('::ffff:') && peer.includes('.') ? peer.slice(7) : peer;
  const values = incoming.headers[settings.proxyHeader];
  return resolveClientAddress(settings, peer, Array.isArray(values) ? values.join(', ') : values);
}
