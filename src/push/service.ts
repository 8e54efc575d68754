// Web Push subscriptions of a signed-in person: a browser's PushSubscription (endpoint and keys),
// registered, listed and removed by the person. They go with the account, and with the last
// workspace the person belonged to.
import { createPublicKey } from 'node:crypto';
import net from 'node:net';
import type { Ctx } from '../context.js';
import type { PushSubscriptionsTable } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { nonPublicRange } from '../webhooks/address.js';

export type PushSubscriptionRow = PushSubscriptionsTable;
type C = Pick<Ctx, 'db' | 'clock' | 'config'>;

export const PUSH_ENDPOINT_MAX_LENGTH = 2048;
export const PUSH_SUBSCRIPTIONS_PER_PERSON = 20;
const USER_AGENT_MAX = 300;

export interface PushSubscriptionInput {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  expiration_time?: number | null;
  user_agent?: string | null;
}

function base64url(value: string, what: string): Buffer {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(value)) throw invalid(`${what} must be base64url`);
  return Buffer.from(value.replace(/=+$/, ''), 'base64url');
}

/** The push service URL: https, no credentials, not a loopback, private or otherwise non-public address. */
export function checkPushEndpoint(raw: string): string {
  if (raw.length > PUSH_ENDPOINT_MAX_LENGTH) throw invalid(`endpoint is longer than ${PUSH_ENDPOINT_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('endpoint is not a URL');
  }
  if (url.protocol !== 'https:') throw invalid('endpoint must be an https URL (a push service)');
  if (url.username || url.password) throw invalid('endpoint must not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) throw invalid('endpoint must be a public push service');
  if (net.isIP(host)) {
    const range = nonPublicRange(host);
    if (range) throw invalid(`endpoint is a ${range} address; push services are on public addresses`);
  }
  return url.toString();
}

/** p256dh: an uncompressed P-256 public key (65 bytes, 0x04 first) that is a point on the curve. */
export function checkP256dh(value: string): string {
  const point = base64url(value, 'keys.p256dh');
  if (point.length !== 65 || point[0] !== 4) throw invalid('keys.p256dh must be an uncompressed P-256 public key (65 bytes)');
  try {
    createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
      format: 'jwk',
    });
  } catch {
    throw invalid('keys.p256dh is not a point on the P-256 curve');
  }
  return point.toString('base64url');
}

export function checkAuthSecret(value: string): string {
  const secret = base64url(value, 'keys.auth');
  if (secret.length !== 16) throw invalid('keys.auth must be 16 bytes');
  return secret.toString('base64url');
}

/**
 * Registers (or renews) a subscription for the person. The same endpoint registered again replaces
 * its keys; an endpoint another account registered moves to this one (the browser signed in anew).
 */
export async function registerPushSubscription(ctx: C, personId: string, input: PushSubscriptionInput): Promise<PushSubscriptionRow> {
  if (!ctx.config.vapid) throw conflict('Web Push is off on this server (SVC_VAPID_PUBLIC_KEY is not set)', 'push_not_configured');
  const endpoint = checkPushEndpoint(input.endpoint);
  const p256dh = checkP256dh(input.keys.p256dh);
  const auth = checkAuthSecret(input.keys.auth);
  const now = ctx.clock.now();
  let expiresAt: string | null = null;
  if (input.expiration_time != null) {
    if (!Number.isSafeInteger(input.expiration_time) || input.expiration_time <= now.getTime())
      throw invalid('expiration_time must be a future time in milliseconds since 1970');
    expiresAt = iso(input.expiration_time);
  }
  const userAgent = input.user_agent ? input.user_agent.slice(0, USER_AGENT_MAX) : null;
  return ctx.db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('push_subscriptions').selectAll().where('endpoint', '=', endpoint).executeTakeFirst();
    if (!existing || existing.person_id !== personId) {
      const count = await trx
        .selectFrom('push_subscriptions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('person_id', '=', personId)
        .executeTakeFirstOrThrow();
      if (Number(count.n) >= PUSH_SUBSCRIPTIONS_PER_PERSON) {
        throw conflict(`an account has at most ${PUSH_SUBSCRIPTIONS_PER_PERSON} push subscriptions; remove one first`, 'too_many_push_subscriptions');
      }
    }
    const at = iso(now);
    if (existing) {
      await trx
        .updateTable('push_subscriptions')
        .set({ person_id: personId, key_p256dh: p256dh, key_auth: auth, expires_at: expiresAt, user_agent: userAgent, updated_at: at })
        .where('id', '=', existing.id)
        .execute();
      return { ...existing, person_id: personId, key_p256dh: p256dh, key_auth: auth, expires_at: expiresAt, user_agent: userAgent, updated_at: at };
    }
    const row: PushSubscriptionRow = {
      id: newId('push'),
      person_id: personId,
      endpoint,
      key_p256dh: p256dh,
      key_auth: auth,
      expires_at: expiresAt,
      user_agent: userAgent,
      created_at: at,
      updated_at: at,
    };
    await trx.insertInto('push_subscriptions').values(row).execute();
    return row;
  });
}

export async function listPushSubscriptions(ctx: Pick<Ctx, 'db'>, personId: string, page: { limit: number; before?: string }): Promise<PushSubscriptionRow[]> {
  let q = ctx.db.selectFrom('push_subscriptions').selectAll().where('person_id', '=', personId);
  if (page.before) q = q.where('id', '<', page.before);
  return q
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

export async function removePushSubscription(ctx: Pick<Ctx, 'db'>, personId: string, id: string): Promise<void> {
  const r = await ctx.db.deleteFrom('push_subscriptions').where('id', '=', id).where('person_id', '=', personId).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) throw notFound('push subscription');
}

/** What the API shows: never the keys (the auth secret lets anyone encrypt for that browser). */
export function formatPushSubscription(s: PushSubscriptionRow) {
  return { id: s.id, endpoint: s.endpoint, expiration_time: s.expires_at, user_agent: s.user_agent, created_at: s.created_at, updated_at: s.updated_at };
}

/** Every subscription of a person (for notifications), oldest first. */
export async function pushSubscriptionsOf(ctx: Pick<Ctx, 'db'>, personIds: readonly string[]): Promise<PushSubscriptionRow[]> {
  if (personIds.length === 0) return [];
  return ctx.db
    .selectFrom('push_subscriptions')
    .selectAll()
    .where('person_id', 'in', [...personIds])
    .orderBy('id')
    .execute();
}

export async function findPushSubscription(ctx: Pick<Ctx, 'db'>, id: string): Promise<PushSubscriptionRow | undefined> {
  return ctx.db.selectFrom('push_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The push service said the subscription is gone (404/410): it is removed. */
export async function dropPushSubscription(ctx: Pick<Ctx, 'db'>, id: string): Promise<void> {
  await ctx.db.deleteFrom('push_subscriptions').where('id', '=', id).execute();
}
