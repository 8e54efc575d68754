// Amazon SNS HTTP(S) notifications: signature checks. The raw body is JSON whatever the content
// type; a message is trusted only when its TopicArn is one of SVC_MAILER_TOPIC_ARNS and its
// signature (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA) verifies against the signing
// certificate, fetched over HTTPS from an SNS host (sns.<region>.amazonaws.com) and cached.
import { createVerify, type KeyObject, X509Certificate } from 'node:crypto';
import type { Ctx } from '../context.js';
import { DAY } from '../platform/clock.js';
import { forbidden, invalid } from '../platform/errors.js';

export interface SnsMessage {
  Type: 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  Subject?: string;
  SubscribeURL?: string;
  Token?: string;
  UnsubscribeURL?: string;
}

const SIGNED_FIELDS: Record<SnsMessage['Type'], (keyof SnsMessage)[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

const CERT_MAX_BYTES = 64 * 1024;
const CERT_CACHE_MS = DAY;
const CERT_CACHE_ENTRIES = 100;
const FETCH_TIMEOUT_MS = 10_000;

export function parseSnsMessage(raw: string): SnsMessage {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw invalid('the body is not an Amazon SNS message (not JSON)');
  }
  const m = body as Partial<SnsMessage>;
  if (!m || typeof m !== 'object' || !m.Type || !(m.Type in SIGNED_FIELDS)) throw invalid('the body is not an Amazon SNS message (unknown Type)');
  for (const f of ['MessageId', 'TopicArn', 'Message', 'Timestamp', 'SignatureVersion', 'Signature', 'SigningCertURL'] as const) {
    if (typeof m[f] !== 'string' || !m[f]) throw invalid(`the SNS message lacks ${f}`);
  }
  if (m.Type !== 'Notification' && (typeof m.SubscribeURL !== 'string' || typeof m.Token !== 'string'))
    throw invalid('the SNS message lacks SubscribeURL or Token');
  return m as SnsMessage;
}

/** The text SNS signs: each present field's name and value, one per line, in a fixed order. */
export function stringToSign(m: SnsMessage): string {
  return SIGNED_FIELDS[m.Type]
    .filter((f) => typeof m[f] === 'string')
    .map((f) => `${f}\n${m[f]}\n`)
    .join('');
}

/** An SNS URL we may fetch: https on sns.<region>.amazonaws.com(.cn), or the test endpoint's origin. */
export function trustedSnsUrl(config: Pick<Ctx['config'], 'mailerEndpoint'>, raw: string, kind: 'certificate' | 'subscribe'): URL | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (config.mailerEndpoint && url.origin === new URL(config.mailerEndpoint).origin) return url;
  if (url.protocol !== 'https:' || url.username || url.password || url.port) return undefined;
  if (!/^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/.test(url.hostname)) return undefined;
  if (kind === 'certificate' && !url.pathname.endsWith('.pem')) return undefined;
  return url;
}

async function fetchLimited(url: URL, maxBytes: number): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      throw new Error(`answer larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return { status: res.status, body: Buffer.concat(chunks).toString('utf8') };
}

/** Verifies SNS signatures; signing certificates are cached per URL for a day. One per server. */
export class SnsVerifier {
  private certs = new Map<string, { key: KeyObject; validTo: number; fetchedAt: number }>();

  constructor(private readonly ctx: Pick<Ctx, 'config' | 'clock' | 'log'>) {}

  private async signingKey(rawUrl: string): Promise<KeyObject> {
    const url = trustedSnsUrl(this.ctx.config, rawUrl, 'certificate');
    if (!url) throw forbidden('the signing certificate is not on an Amazon SNS host');
    const now = this.ctx.clock.now().getTime();
    const cached = this.certs.get(url.href);
    if (cached && now - cached.fetchedAt < CERT_CACHE_MS && now < cached.validTo) return cached.key;
    let cert: X509Certificate;
    try {
      const res = await fetchLimited(url, CERT_MAX_BYTES);
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      cert = new X509Certificate(res.body);
    } catch (error) {
      this.ctx.log.warn('sns signing certificate not loaded', { url: url.href, error });
      throw forbidden('the signing certificate could not be loaded');
    }
    const validFrom = new Date(cert.validFrom).getTime();
    const validTo = new Date(cert.validTo).getTime();
    if (!(now >= validFrom && now <= validTo)) throw forbidden('the signing certificate is not valid now');
    if (this.certs.size >= CERT_CACHE_ENTRIES) this.certs.delete(this.certs.keys().next().value!);
    this.certs.set(url.href, { key: cert.publicKey, validTo, fetchedAt: now });
    return cert.publicKey;
  }

  /** Throws 403 unless the topic is accepted and the signature verifies. */
  async verify(m: SnsMessage): Promise<void> {
    if (!this.ctx.config.mailerTopicArns.includes(m.TopicArn)) throw forbidden('notifications of this topic are not accepted (SVC_MAILER_TOPIC_ARNS)');
    const algorithm = m.SignatureVersion === '1' ? 'RSA-SHA1' : m.SignatureVersion === '2' ? 'RSA-SHA256' : undefined;
    if (!algorithm) throw forbidden(`unknown SignatureVersion ${JSON.stringify(m.SignatureVersion)}`);
    const key = await this.signingKey(m.SigningCertURL);
    const ok = createVerify(algorithm).update(stringToSign(m), 'utf8').verify(key, m.Signature, 'base64');
    if (!ok) throw forbidden('the SNS signature does not verify');
  }

  /** Confirms a subscription by visiting its SubscribeURL (after verify). */
  async confirmSubscription(m: SnsMessage): Promise<void> {
    const url = trustedSnsUrl(this.ctx.config, m.SubscribeURL ?? '', 'subscribe');
    if (!url) throw forbidden('the SubscribeURL is not on an Amazon SNS host');
    const res = await fetchLimited(url, CERT_MAX_BYTES);
    if (res.status !== 200) throw new Error(`SubscribeURL answered ${res.status}`);
  }
}
