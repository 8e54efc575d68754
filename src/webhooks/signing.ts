// Standard Webhooks signatures: base64 HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>",
// keyed with the base64-decoded part of the secret after "whsec_".
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

export function signatureFor(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64');
}

/** The three headers of one attempt; every secret given signs (two during a rotation overlap), newest first. */
export function signedHeaders(
  secrets: readonly string[],
  msgId: string,
  timestampSeconds: number,
  body: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...extra,
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signatureFor(s, msgId, timestampSeconds, body)).join(' '),
  };
}
