// What comes back from broadcast mail: permanent bounces, spam complaints and unsubscribes.
// Each finds its recipient by the token we put in the mail (see links.ts) or by the message id the
// provider gave, is counted once (on the broadcast and on the day the mail was sent), and puts the
// address on the workspace's suppression list. Then the broadcast's own rates are checked (it
// pauses itself) and the workspace's 30-day rates (automatic suspension).
//
// A broadcast pauses itself once at least PAUSE_MIN_SENT of its mails were sent and
//   - permanent bounces reach 5 % of them (reason `bounce_rate`), or
//   - spam complaints reach 0.3 % of them (reason `complaint_rate`).
// Transient bounces (mailbox full, greylisting) are not counted: the receiving server retries.
// A member may resume it; the next report that keeps the rate at or above the threshold pauses it again.
import type { Ctx } from '../context.js';
import { iso } from '../platform/clock.js';
import { addDayTotals, checkAutomaticSuspension, percent, utcDay } from './governance.js';
import { findRecipientToken, linkKey, parseRecipientToken, type RecipientRef } from './links.js';
import { selfPause } from './sender.js';
import { findBroadcast } from './store.js';

export const PAUSE_MIN_SENT = 200;
export const PAUSE_BOUNCE_PERCENT = 5;
export const PAUSE_COMPLAINT_PER_THOUSAND = 3;

export type FeedbackKind = 'bounce' | 'complaint';

/** Where a report says the mail came from: any of these may identify the recipient. */
export interface MailRefs {
  /** Texts that may hold our token: the X-Svc-Broadcast header, the Message-ID, a VERP address. */
  texts?: (string | null | undefined)[];
  /** The provider's message id (SES mail.messageId). */
  providerMessageId?: string | null;
}

async function findRecipient(ctx: Pick<Ctx, 'db' | 'sealer'>, refs: MailRefs): Promise<RecipientRef | undefined> {
  const key = await linkKey(ctx);
  for (const text of refs.texts ?? []) {
    const ref = findRecipientToken(key, text);
    if (ref) return ref;
  }
  if (refs.providerMessageId) {
    const row = await ctx.db
      .selectFrom('broadcast_recipients')
      .select(['broadcast_id', 'seq'])
      .where('provider_message_id', '=', refs.providerMessageId)
      .executeTakeFirst();
    if (row) return { broadcastId: row.broadcast_id, seq: row.seq };
  }
  return undefined;
}

/**
 * Records a permanent bounce or a complaint for the recipient the refs identify. Returns false
 * when no recipient matches or it was recorded before (reports may come more than once).
 */
export async function recordFeedback(ctx: Ctx, kind: FeedbackKind, refs: MailRefs): Promise<boolean> {
  const ref = await findRecipient(ctx, refs);
  if (!ref) return false;
  const b = await findBroadcast(ctx.db, ref.broadcastId);
  if (!b) return false;
  const column = kind === 'bounce' ? 'bounced_at' : 'complained_at';
  const now = iso(ctx.clock.now());
  const recorded = await ctx.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('broadcast_recipients')
      .set({ [column]: now })
      .where('broadcast_id', '=', b.id)
      .where('seq', '=', ref.seq)
      .where(column, 'is', null)
      .returning(['email', 'sent_at'])
      .executeTakeFirst();
    if (!row) return false;
    // Counted on the day the mail was sent (the 30-day rates are about the mails of those days).
    await addDayTotals(
      trx,
      b.workspace_id,
      utcDay(row.sent_at ? new Date(row.sent_at) : ctx.clock.now()),
      kind === 'bounce' ? { bounced: 1 } : { complained: 1 },
    );
    await trx
      .updateTable('broadcasts')
      .set((eb) => (kind === 'bounce' ? { bounced_count: eb('bounced_count', '+', 1) } : { complained_count: eb('complained_count', '+', 1) }))
      .where('id', '=', b.id)
      .execute();
    await trx
      .insertInto('broadcast_suppressions')
      .values({ workspace_id: b.workspace_id, email: row.email, reason: kind === 'bounce' ? 'bounced' : 'complained', broadcast_id: b.id, created_at: now })
      .onConflict((oc) => oc.columns(['workspace_id', 'email']).doNothing())
      .execute();
    return true;
  });
  if (!recorded) return false;
  ctx.log.info(kind === 'bounce' ? 'broadcast bounce recorded' : 'broadcast complaint recorded', { broadcast_id: b.id, workspace_id: b.workspace_id });
  await checkBroadcastRates(ctx, b.id);
  await checkAutomaticSuspension(ctx, b.workspace_id);
  return true;
}

/** Pauses a running broadcast whose bounce or complaint rate reached its threshold. */
export async function checkBroadcastRates(ctx: Ctx, broadcastId: string): Promise<void> {
  const b = await findBroadcast(ctx.db, broadcastId);
  if (!b || (b.status !== 'sending' && b.status !== 'scheduled') || b.sent_count < PAUSE_MIN_SENT) return;
  if (b.bounced_count * 100 >= PAUSE_BOUNCE_PERCENT * b.sent_count) {
    await selfPause(
      ctx,
      b,
      'bounce_rate',
      `${b.bounced_count} of ${b.sent_count} mails bounced (${percent(b.bounced_count, b.sent_count)}; the limit is ${PAUSE_BOUNCE_PERCENT} %)`,
    );
  } else if (b.complained_count * 1000 >= PAUSE_COMPLAINT_PER_THOUSAND * b.sent_count) {
    await selfPause(
      ctx,
      b,
      'complaint_rate',
      `${b.complained_count} of ${b.sent_count} mails reported as spam (${percent(b.complained_count, b.sent_count)}; the limit is 0.3 %)`,
    );
  }
}

/** One-click unsubscribe (RFC 8058): the address is never mailed again by the workspace. */
export async function unsubscribe(ctx: Ctx, token: string): Promise<{ found: boolean; already: boolean }> {
  const key = await linkKey(ctx);
  const ref = parseRecipientToken(key, token);
  if (!ref) return { found: false, already: false };
  const b = await findBroadcast(ctx.db, ref.broadcastId);
  if (!b) return { found: false, already: false };
  const now = iso(ctx.clock.now());
  return ctx.db.transaction().execute(async (trx) => {
    const recipient = await trx
      .selectFrom('broadcast_recipients')
      .select(['email', 'unsubscribed_at'])
      .where('broadcast_id', '=', b.id)
      .where('seq', '=', ref.seq)
      .executeTakeFirst();
    if (!recipient) return { found: false, already: false };
    await trx
      .insertInto('broadcast_suppressions')
      .values({ workspace_id: b.workspace_id, email: recipient.email, reason: 'unsubscribed', broadcast_id: b.id, created_at: now })
      .onConflict((oc) => oc.columns(['workspace_id', 'email']).doNothing())
      .execute();
    if (recipient.unsubscribed_at) return { found: true, already: true };
    await trx.updateTable('broadcast_recipients').set({ unsubscribed_at: now }).where('broadcast_id', '=', b.id).where('seq', '=', ref.seq).execute();
    await trx
      .updateTable('broadcasts')
      .set((eb) => ({ unsubscribed_count: eb('unsubscribed_count', '+', 1) }))
      .where('id', '=', b.id)
      .execute();
    ctx.log.info('broadcast unsubscribe recorded', { broadcast_id: b.id, workspace_id: b.workspace_id });
    return { found: true, already: false };
  });
}
