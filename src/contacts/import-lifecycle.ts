// Contact imports and segments in the data-lifecycle tables (src/lifecycle/registry.ts): an import
// is kept 30 days after it ended (its file is removed when it ends); an upload never started is
// removed with its file after a day. A deleted workspace's imports (with files) and segments go.
import { iso } from '../platform/clock.js';
import type { RetentionRule, WorkspaceDataStep } from '../platform/lifecycle.js';
import { deleteWorkspaceSegments } from './segments.js';

const DAY_MS = 24 * 60 * 60 * 1000;
export const FINISHED_IMPORT_KEEP_DAYS = 30;

export const contactImportsRule: RetentionRule = {
  name: 'contact_imports',
  async deleteBatch(ctx, now, batch) {
    const rows = await ctx.db
      .selectFrom('contact_imports')
      .select(['id', 'file_key'])
      .where((eb) =>
        eb.or([
          eb.and([eb('state', 'in', ['done', 'failed']), eb('finished_at', '<', iso(new Date(now.getTime() - FINISHED_IMPORT_KEEP_DAYS * DAY_MS)))]),
          eb.and([eb('state', '=', 'uploaded'), eb('created_at', '<', iso(new Date(now.getTime() - DAY_MS)))]),
        ]),
      )
      .orderBy('id')
      .limit(batch)
      .execute();
    for (const r of rows) if (r.file_key) await ctx.storage.delete(r.file_key);
    if (!rows.length) return 0;
    const done = await ctx.db
      .deleteFrom('contact_imports')
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .where('state', 'in', ['done', 'failed', 'uploaded'])
      .executeTakeFirst();
    return Number(done.numDeletedRows);
  },
};

export const workspaceContactImportsStep: WorkspaceDataStep = {
  name: 'contact_imports',
  async deleteBatch(ctx, workspaceId, batch) {
    const rows = await ctx.db
      .selectFrom('contact_imports')
      .select(['id', 'file_key'])
      .where('workspace_id', '=', workspaceId)
      .orderBy('id')
      .limit(batch)
      .execute();
    let files = 0;
    for (const r of rows) {
      if (r.file_key) {
        await ctx.storage.delete(r.file_key);
        files++;
      }
    }
    let deleted = 0;
    if (rows.length) {
      const d = await ctx.db
        .deleteFrom('contact_imports')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .executeTakeFirst();
      deleted = Number(d.numDeletedRows);
    }
    return { rows: deleted + (await deleteWorkspaceSegments(ctx.db, workspaceId, batch)), files };
  },
};
