// Per-recipient tokens of broadcast mail. One token names a broadcast and a recipient and carries
// an HMAC under a key of this server, so that it cannot be made up. It appears in the Message-ID,
// the X-Svc-Broadcast header, the one-click unsubscribe link (RFC 8058) and the VERP return path,
// so a bounce, a complaint or an unsubscribe finds its recipient whichever way it comes back.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ChannelRow } from '../channels/service.js';
import type { Ctx } from '../context.js';
import { channelMailDomain } from '../mail/transport.js';
import { serverKey } from '../platform/server-key.js';

const LINK_KEY = 'broadcast_link_key';
const MAC_CHARS = 12;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** The server's link key: random, created once, stored sealed under the master key. */
export function linkKey(ctx: Pick<Ctx, 'db' | 'sealer'>): Promise<Buffer> {
  return serverKey(ctx, LINK_KEY);
}

function mac(key: Buffer, broadcastId: string, seq: number): string {
  const digest = createHmac('sha256', key).update(`${broadcastId}.${seq}`).digest();
  let out = '';
  for (let i = 0; i < MAC_CHARS; i++) out += ALPHABET[digest[i] & 31];
  return out;
}

/** `<broadcast id>-<seq>-<mac>`: lower case letters, digits, `_` and `-` (safe in local parts, URLs and SES tags). */
export function recipientToken(key: Buffer, broadcastId: string, seq: number): string {
  return `${broadcastId}-${seq}-${mac(key, broadcastId, seq)}`;
}

export interface RecipientRef {
  broadcastId: string;
  seq: number;
}

/** The recipient a token names, or undefined when the token is malformed or its MAC is wrong. */
export function parseRecipientToken(key: Buffer, token: string): RecipientRef | undefined {
  const m = /^(bc_[0-9a-z]{26})-(\d{1,9})-([0-9a-z]{12})$/.exec(token.trim().toLowerCase());
  if (!m) return undefined;
  const seq = Number(m[2]);
  const expected = Buffer.from(mac(key, m[1], seq));
  const given = Buffer.from(m[3]);
  return timingSafeEqual(expected, given) ? { broadcastId: m[1], seq } : undefined;
}

/** Finds a recipient token anywhere in a text (a header value, a Message-ID, an address). */
export function findRecipientToken(key: Buffer, text: string | null | undefined): RecipientRef | undefined {
  if (!text) return undefined;
  for (const m of text.toLowerCase().matchAll(/bc_[0-9a-z]{26}-\d{1,9}-[0-9a-z]{12}/g)) {
    const ref = parseRecipientToken(key, m[0]);
    if (ref) return ref;
  }
  return undefined;
}

export function broadcastMessageId(token: string, channel: ChannelRow): string {
  return `${token}@${channelMailDomain(channel)}`;
}

export function unsubscribeUrl(ctx: Pick<Ctx, 'config'>, token: string): string {
  return `${ctx.config.publicUrl}/v1/unsubscribe/${token}`;
}

const VERP_PREFIX = 'b-';
const MAX_LOCAL_PART = 64;

/**
 * The envelope sender (VERP) of broadcast mail, so that delivery reports come back to the SMTP
 * ingress naming their recipient: `b-<token>@<forwarding domain>` when the server has one, else
 * `<channel local part>+b-<token>@<channel domain>`. None when the ingress is off, for channels
 * of Amazon SES (it reports through SNS and requires a verified return path), or when the
 * local part would be too long.
 */
export function returnPath(ctx: Pick<Ctx, 'config'>, channel: ChannelRow, token: string): string | undefined {
  if (!ctx.config.ingress || isSesSmtpHost(channel.smtp_host)) return undefined;
  if (ctx.config.forwardingDomain) return `${VERP_PREFIX}${token}@${ctx.config.forwardingDomain}`;
  const address = channel.address ?? '';
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = `${address.slice(0, at)}+${VERP_PREFIX}${token}`;
  return local.length <= MAX_LOCAL_PART ? `${local}@${address.slice(at + 1)}` : undefined;
}

/** The token of a VERP return path (see returnPath), checked; undefined for any other address. */
export function tokenOfReturnPath(ctx: Pick<Ctx, 'config'>, key: Buffer, address: string): RecipientRef | undefined {
  const a = address.trim().toLowerCase();
  const at = a.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = a.slice(0, at);
  const domain = a.slice(at + 1);
  let token: string | undefined;
  if (ctx.config.forwardingDomain && domain === ctx.config.forwardingDomain && local.startsWith(VERP_PREFIX)) token = local.slice(VERP_PREFIX.length);
  else {
    const plus = local.lastIndexOf(`+${VERP_PREFIX}`);
    if (plus > 0) token = local.slice(plus + 1 + VERP_PREFIX.length);
  }
  return token ? parseRecipientToken(key, token) : undefined;
}

/** Amazon SES's SMTP endpoints: email-smtp.<region>.amazonaws.com (and the FIPS ones). */
export function isSesSmtpHost(host: string | null | undefined): boolean {
  return !!host && /^email-smtp(-fips)?\.[a-z0-9-]+\.amazonaws\.com$/i.test(host);
}
