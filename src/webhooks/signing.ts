// Standard Webhooks signatures: base64 HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>",
// keyed with the base64-decoded part of the secret after "whsec_".
import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a secret, decoded once for all the attempts signed with it. */
export function signingKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'));
}

/** `body` may be the UTF-8 bytes of the body: one event's bytes then serve every endpoint's attempt. */
export function signatureFor(secret: string | KeyObject, msgId: string, timestampSeconds: number, body: string | Buffer): string {
  return signWith(typeof secret === 'string' ? signingKey(secret) : secret, signedPrefix(msgId, timestampSeconds), body);
}

/** What a signature covers before the body: "<webhook-id>.<webhook-timestamp>.", the same for every endpoint of one event and send time. */
export function signedPrefix(msgId: string, timestampSeconds: number): string {
  return `${msgId}.${timestampSeconds}.`;
}

/** The webhook-signature value of one attempt: each key signs (two during a rotation overlap), newest first. */
export function signatureValue(keys: readonly KeyObject[], prefix: string, body: string | Buffer): string {
  if (keys.length === 1) return signWith(keys[0]!, prefix, body);
  return keys.map((key) => signWith(key, prefix, body)).join(' ');
}

function signWith(key: KeyObject, prefix: string, body: string | Buffer): string {
  return `v1,${createHmac('sha256', key).update(prefix).update(body).digest('base64')}`;
}

/** The three headers of one attempt; every secret given signs (two during a rotation overlap), newest first. */
export function signedHeaders(
  secrets: readonly (string | KeyObject)[],
  msgId: string,
  timestampSeconds: number,
  body: string | Buffer,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...extra,
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signatureFor(s, msgId, timestampSeconds, body)).join(' '),
  };
}
