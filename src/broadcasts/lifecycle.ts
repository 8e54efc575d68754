// Broadcast data in the retention and workspace-deletion tables (src/lifecycle/registry.ts):
// recipients of a finished broadcast go 400 days after it finished (its counts stay); daily
// sending totals go after 90 days; sent operator digest lines after 30 days.
import type { Ctx } from '../context.js';
import { deleteChosen } from '../db/bulk.js';
import { deleteSentDigestLines } from '../operator-digest/service.js';
import { DAY, iso } from '../platform/clock.js';
import type { RetentionRule, WorkspaceDataStep } from '../platform/lifecycle.js';
import { utcDay } from './governance.js';

export const RECIPIENTS_KEEP_DAYS = 400;
export const DAILY_TOTALS_KEEP_DAYS = 90;

async function deleteRecipientsOf(ctx: Pick<Ctx, 'db'>, broadcastId: string, batch: number): Promise<number> {
  const seqs = await ctx.db.selectFrom('broadcast_recipients').select('seq').where('broadcast_id', '=', broadcastId).orderBy('seq').limit(batch).execute();
  if (seqs.length === 0) return 0;
  await ctx.db
    .deleteFrom('broadcast_recipients')
    .where('broadcast_id', '=', broadcastId)
    .where('seq', '<=', seqs[seqs.length - 1].seq)
    .execute();
  return seqs.length;
}

export const broadcastRetentionRules: RetentionRule[] = [
  {
    name: 'broadcast_recipients',
    async deleteBatch(ctx, now, batch) {
      const cutoff = iso(now.getTime() - RECIPIENTS_KEEP_DAYS * DAY);
      const due = await ctx.db
        .selectFrom('broadcasts')
        .select('id')
        .where('finished_at', '<', cutoff)
        .where('recipients_deleted_at', 'is', null)
        .orderBy('finished_at')
        .limit(1)
        .executeTakeFirst();
      if (!due) return 0;
      const deleted = await deleteRecipientsOf(ctx, due.id, batch);
      if (deleted < batch)
        await ctx.db
          .updateTable('broadcasts')
          .set({ recipients_deleted_at: iso(now) })
          .where('id', '=', due.id)
          .execute();
      // A broadcast whose recipients were all gone already still counts as progress.
      return Math.max(deleted, 1);
    },
  },
  {
    name: 'broadcast_daily_totals',
    async deleteBatch(ctx, now, batch) {
      const cutoff = utcDay(now.getTime() - DAILY_TOTALS_KEEP_DAYS * DAY);
      const rows = await ctx.db.selectFrom('broadcast_daily_totals').select(['workspace_id', 'day']).where('day', '<', cutoff).limit(batch).execute();
      for (const r of rows) await ctx.db.deleteFrom('broadcast_daily_totals').where('workspace_id', '=', r.workspace_id).where('day', '=', r.day).execute();
      return rows.length;
    },
  },
  { name: 'operator_digest_lines', deleteBatch: (ctx, now, batch) => deleteSentDigestLines(ctx, now, batch) },
];

export const broadcastWorkspaceSteps: WorkspaceDataStep[] = [
  {
    name: 'broadcast_recipients',
    async deleteBatch(ctx, workspaceId, batch) {
      const b = await ctx.db
        .selectFrom('broadcasts')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb.exists(eb.selectFrom('broadcast_recipients').select('seq').whereRef('broadcast_recipients.broadcast_id', '=', 'broadcasts.id')))
        .limit(1)
        .executeTakeFirst();
      if (!b) return { rows: 0, files: 0 };
      return { rows: await deleteRecipientsOf(ctx, b.id, batch), files: 0 };
    },
    async deleteInboxBatch(ctx, { inboxId }, batch) {
      const b = await ctx.db
        .selectFrom('broadcasts')
        .select('id')
        .where('inbox_id', '=', inboxId)
        .where((eb) => eb.exists(eb.selectFrom('broadcast_recipients').select('seq').whereRef('broadcast_recipients.broadcast_id', '=', 'broadcasts.id')))
        .limit(1)
        .executeTakeFirst();
      if (!b) return { rows: 0, files: 0 };
      return { rows: await deleteRecipientsOf(ctx, b.id, batch), files: 0 };
    },
  },
  {
    name: 'broadcasts',
    async deleteBatch(ctx, workspaceId, batch) {
      const rows = await deleteChosen(ctx.db, 'broadcasts', 'id', ctx.db.selectFrom('broadcasts').select('id').where('workspace_id', '=', workspaceId), batch);
      return { rows, files: 0 };
    },
    // A deleted inbox's broadcasts (cancelled when it was deleted); the workspace's daily totals stay.
    async deleteInboxBatch(ctx, { inboxId }, batch) {
      const rows = await deleteChosen(ctx.db, 'broadcasts', 'id', ctx.db.selectFrom('broadcasts').select('id').where('inbox_id', '=', inboxId), batch);
      return { rows, files: 0 };
    },
  },
  {
    name: 'broadcast_suppressions',
    async deleteBatch(ctx, workspaceId, batch) {
      const rows = await ctx.db.selectFrom('broadcast_suppressions').select('email').where('workspace_id', '=', workspaceId).limit(batch).execute();
      if (rows.length)
        await ctx.db
          .deleteFrom('broadcast_suppressions')
          .where('workspace_id', '=', workspaceId)
          .where(
            'email',
            'in',
            rows.map((r) => r.email),
          )
          .execute();
      return { rows: rows.length, files: 0 };
    },
  },
  {
    name: 'broadcast_governance',
    async deleteBatch(ctx, workspaceId) {
      const totals = await ctx.db.deleteFrom('broadcast_daily_totals').where('workspace_id', '=', workspaceId).executeTakeFirst();
      const gov = await ctx.db.deleteFrom('broadcast_governance').where('workspace_id', '=', workspaceId).executeTakeFirst();
      return { rows: Number(totals.numDeletedRows) + Number(gov.numDeletedRows), files: 0 };
    },
  },
];
