// A contact segment as a broadcast's audience (issue 37): the broadcast names the segment, and its
// contacts (their first addresses) become recipients once, when sending starts, so the segment's
// contacts at that moment get the mail. They are claimed like every recipient: the workspace's
// suppressions (unsubscribed, bounced, complained) are skipped at send time (recipients.ts).
import type { Insertable } from 'kysely';
import type { Access } from '../auth/access.js';
import { getSegmentFor, segmentContactPages } from '../contacts/segments.js';
import { firstEmailsOf } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import type { BroadcastRecipientsTable } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { AppError, forbidden } from '../platform/errors.js';
import type { BroadcastRow } from './store.js';

/** A segment may be an audience for callers that reach every inbox (it covers the whole workspace). */
export async function checkSegmentAudience(ctx: Pick<Ctx, 'db'>, access: Access, segmentId: string): Promise<string> {
  if (access.inboxIds !== null) throw forbidden('a segment as the audience needs a credential that reaches every inbox');
  return (await getSegmentFor(ctx, access, segmentId)).id;
}

class OverLimit extends Error {
  constructor(readonly count: number) {
    super('over the server limit');
  }
}

/**
 * Adds the segment's contacts as recipients (once: segment_resolved_at), in one transaction.
 * Returns the recipients added, or a reason the broadcast cannot go on.
 */
export async function resolveSegmentAudience(ctx: Ctx, b: BroadcastRow): Promise<{ added: number } | { overLimit: number }> {
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      const now = iso(ctx.clock.now());
      const claimed = await trx
        .updateTable('broadcasts')
        .set({ segment_resolved_at: now, updated_at: now })
        .where('id', '=', b.id)
        .where('segment_resolved_at', 'is', null)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0 || !b.segment_id) return { added: 0 };
      const last = await trx
        .selectFrom('broadcast_recipients')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .where('broadcast_id', '=', b.id)
        .executeTakeFirst();
      let seq = Number(last?.seq ?? 0);
      let added = 0;
      try {
        for await (const ids of segmentContactPages(trx, b.workspace_id, b.segment_id)) {
          const rows: Insertable<BroadcastRecipientsTable>[] = (await firstEmailsOf(trx, ids)).map((a) => ({
            broadcast_id: b.id,
            seq: ++seq,
            email: a.email,
            contact_id: a.contactId,
            status: 'pending',
            retry_at: null,
            error: null,
            sent_at: null,
            provider_message_id: null,
            bounced_at: null,
            complained_at: null,
            unsubscribed_at: null,
          }));
          for (let i = 0; i < rows.length; i += 500) {
            const r = await trx
              .insertInto('broadcast_recipients')
              .values(rows.slice(i, i + 500))
              .onConflict((oc) => oc.columns(['broadcast_id', 'email']).doNothing())
              .executeTakeFirst();
            added += Number(r.numInsertedOrUpdatedRows ?? 0);
          }
        }
      } catch (error) {
        // A segment deleted meanwhile (deletion is refused while a broadcast waits on it) adds nobody.
        if (!(error instanceof AppError && error.status === 404)) throw error;
      }
      const updated = await trx
        .updateTable('broadcasts')
        .set((eb) => ({ recipients_count: eb('recipients_count', '+', added) }))
        .where('id', '=', b.id)
        .returning('recipients_count')
        .executeTakeFirstOrThrow();
      const server = ctx.config.broadcasts.dailyRecipients;
      if (server > 0 && updated.recipients_count > server) throw new OverLimit(updated.recipients_count);
      return { added };
    });
  } catch (error) {
    if (error instanceof OverLimit) return { overLimit: error.count };
    throw error;
  }
}
