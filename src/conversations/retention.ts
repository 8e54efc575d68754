// Retention of conversations (the workspace's retention_days) and their part of a workspace deletion.
import { sql } from 'kysely';
import type { Ctx } from '../context.js';
import { DAY, iso } from '../platform/clock.js';
import type { DeletionTally, RetentionRule, WorkspaceDataStep } from '../platform/lifecycle.js';
import { workspacesWithRetention } from '../workspaces/store.js';
import { deleteConversationsWithFiles, deleteScheduledFilesNow, scheduleFileDeletion } from './files.js';

/** Live workspaces with retention_days set, and the cutoff each one has at `now`. */
async function retainingWorkspaces(ctx: Pick<Ctx, 'db'>, now: Date): Promise<{ id: string; cutoff: string }[]> {
  const rows = await workspacesWithRetention(ctx.db);
  return rows.map((w) => ({ id: w.id, cutoff: iso(now.getTime() - w.retention_days * DAY) }));
}

/**
 * Closed conversations unchanged for retention_days, with their messages, notes, events,
 * attachments and raw e-mails (files through the deletion job). Imported conversations count from
 * the day of the import.
 */
export const closedConversationsRule: RetentionRule = {
  name: 'conversations',
  batchSize: 50,
  async deleteBatch(ctx, now, batch) {
    for (const ws of await retainingWorkspaces(ctx, now)) {
      // Literal status: the partial index conversations_closed is used only for the literal condition.
      const due = (db: Ctx['db']) =>
        db
          .selectFrom('conversations')
          .select('id')
          .where('workspace_id', '=', ws.id)
          .where(sql<boolean>`status = 'closed'`)
          .where('updated_at', '<', ws.cutoff)
          .where((eb) => eb.or([eb('imported_at', 'is', null), eb('imported_at', '<', ws.cutoff)]));
      const candidates = await due(ctx.db).limit(batch).execute();
      if (candidates.length === 0) continue;
      const deleted = await ctx.db.transaction().execute(async (trx) => {
        // Checked again in the transaction: one may have been reopened or changed since.
        const ids = (
          await due(trx)
            .where(
              'id',
              'in',
              candidates.map((c) => c.id),
            )
            .execute()
        ).map((r) => r.id);
        return (await deleteConversationsWithFiles({ db: trx, clock: ctx.clock }, ids)).conversations;
      });
      if (deleted > 0) return deleted;
    }
    return 0;
  },
};

/** Original .eml files older than retention_days in every conversation; the message stays. */
export const rawEmailsRule: RetentionRule = {
  name: 'raw_emails',
  async deleteBatch(ctx, now, batch) {
    for (const ws of await retainingWorkspaces(ctx, now)) {
      const rows = await ctx.db
        .selectFrom('messages')
        .select('id')
        .where('workspace_id', '=', ws.id)
        .where('raw_storage_key', 'is not', null)
        .where('raw_stored_at', '<', ws.cutoff)
        .limit(batch)
        .execute();
      if (rows.length === 0) continue;
      const cleared = await ctx.db.transaction().execute(async (trx) => {
        // Checked again in the transaction (another run may have cleared some).
        const due = await trx
          .selectFrom('messages')
          .select(['id', 'raw_storage_key'])
          .where(
            'id',
            'in',
            rows.map((r) => r.id),
          )
          .where('raw_storage_key', 'is not', null)
          .execute();
        if (due.length === 0) return 0;
        await trx
          .updateTable('messages')
          .set({ raw_storage_key: null, raw_size: null, raw_sha256: null, raw_stored_at: null })
          .where(
            'id',
            'in',
            due.map((r) => r.id),
          )
          .execute();
        await scheduleFileDeletion(
          { db: trx, clock: ctx.clock },
          due.map((r) => r.raw_storage_key!),
        );
        return due.length;
      });
      if (cleared > 0) return cleared;
    }
    return 0;
  },
};

/** Deletes one batch of conversations (with everything in them); files go right after the batch. */
async function deleteConversationBatch(ctx: Ctx, ids: string[], tally?: DeletionTally): Promise<{ rows: number; files: number }> {
  if (ids.length === 0) return { rows: 0, files: 0 };
  const removed = await ctx.db.transaction().execute(async (trx) => {
    const r = await deleteConversationsWithFiles({ db: trx, clock: ctx.clock }, ids);
    await tally?.(trx, { conversations: r.conversations, files: r.files });
    return r;
  });
  await deleteScheduledFilesNow(ctx, removed.fileJobIds, removed.keys);
  return { rows: removed.conversations, files: removed.files };
}

/** A deleted workspace's (or inbox's) conversations with everything in them. */
export const workspaceConversationsStep: WorkspaceDataStep = {
  name: 'conversations',
  batchSize: 100,
  async deleteBatch(ctx, workspaceId, batch, tally?: DeletionTally) {
    const ids = (await ctx.db.selectFrom('conversations').select('id').where('workspace_id', '=', workspaceId).orderBy('id').limit(batch).execute()).map(
      (r) => r.id,
    );
    return deleteConversationBatch(ctx, ids, tally);
  },
  async deleteInboxBatch(ctx, { workspaceId, inboxId }, batch, tally?: DeletionTally) {
    const ids = (
      await ctx.db
        .selectFrom('conversations')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('inbox_id', '=', inboxId)
        .orderBy('id')
        .limit(batch)
        .execute()
    ).map((r) => r.id);
    return deleteConversationBatch(ctx, ids, tally);
  },
};
