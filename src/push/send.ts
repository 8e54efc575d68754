// Sending one Web Push message (RFC 8030) to a stored subscription. The web-push package encrypts
// the payload for the browser (RFC 8291, aes128gcm, with the subscription's p256dh key and auth
// secret) and signs the VAPID JWT (RFC 8292, ES256, aud = the push service's origin). The request
// goes out with undici through the webhooks' guarded connector: names resolved through ctx.lookup,
// non-public addresses refused unless SVC_WEBHOOK_ALLOW_PRIVATE, 10 s for the whole exchange.
import { createRequire } from 'node:module';
import type { Ctx } from '../context.js';
import { createWebhookAgent } from '../webhooks/address.js';
import type { PushSubscriptionRow } from './service.js';

type WebPush = typeof import('web-push');

let loaded: WebPush | undefined;
/** Loaded on first use: a server that never pushes never pays for it. */
function webPush(): WebPush {
  loaded ??= createRequire(import.meta.url)('web-push') as WebPush;
  return loaded;
}

export const PUSH_DEADLINE_MS = 10_000;
/** How long the push service keeps a message for an offline browser. */
export const PUSH_TTL_SECONDS = 24 * 60 * 60;

export class PushFailed extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/**
 * The subject of the VAPID JWT (how a push service reaches the operator): SVC_VAPID_SUBJECT, else
 * the operator's address, else the public URL when it is https, else the server's own sender.
 */
export function vapidSubject(config: Ctx['config']): string {
  if (config.vapid?.subject) return config.vapid.subject;
  if (config.broadcasts.operatorEmail) return `mailto:${config.broadcasts.operatorEmail}`;
  if (config.publicUrl.startsWith('https://')) return config.publicUrl;
  if (config.smtp?.from) return `mailto:${config.smtp.from}`;
  throw new PushFailed('no VAPID subject: set SVC_VAPID_SUBJECT (mailto: or https:)', null);
}

/**
 * Sends `payload` (JSON) to one subscription. 'delivered' on 2xx; 'gone' when the push service
 * says the subscription no longer exists (404, 410): the caller removes it. Anything else throws
 * PushFailed (the job retries on its backoff).
 */
export async function sendPush(
  ctx: Pick<Ctx, 'config' | 'lookup'>,
  subscription: Pick<PushSubscriptionRow, 'endpoint' | 'key_p256dh' | 'key_auth'>,
  payload: Record<string, unknown>,
  opts: { topic?: string; urgency?: 'normal' | 'high' } = {},
): Promise<'delivered' | 'gone'> {
  const vapid = ctx.config.vapid;
  if (!vapid) throw new PushFailed('Web Push is off (SVC_VAPID_PUBLIC_KEY is not set)', null);
  const details = webPush().generateRequestDetails(
    { endpoint: subscription.endpoint, keys: { p256dh: subscription.key_p256dh, auth: subscription.key_auth } },
    JSON.stringify(payload),
    {
      vapidDetails: { subject: vapidSubject(ctx.config), publicKey: vapid.publicKey, privateKey: vapid.privateKey },
      TTL: PUSH_TTL_SECONDS,
      contentEncoding: 'aes128gcm',
      urgency: opts.urgency ?? 'normal',
      ...(opts.topic ? { topic: opts.topic } : {}),
    },
  );
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(details.headers)) headers[k.toLowerCase()] = String(v);
  const { request } = await import('undici');
  const agent = await createWebhookAgent({ lookup: ctx.lookup, allowPrivate: ctx.config.webhookAllowPrivate, connections: 1 });
  try {
    const res = await request(details.endpoint, {
      method: 'POST',
      dispatcher: agent,
      headers,
      body: details.body as Buffer,
      signal: AbortSignal.timeout(PUSH_DEADLINE_MS),
    });
    await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
    if (res.statusCode >= 200 && res.statusCode < 300) return 'delivered';
    if (res.statusCode === 404 || res.statusCode === 410) return 'gone';
    throw new PushFailed(`the push service answered ${res.statusCode}`, res.statusCode);
  } catch (error) {
    if (error instanceof PushFailed) throw error;
    throw new PushFailed(`the push service could not be reached: ${error instanceof Error ? error.message : String(error)}`, null);
  } finally {
    agent.close().catch(() => {});
  }
}
