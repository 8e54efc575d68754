// Analytics in the data-lifecycle tables: raw events and visits older than SVC_ANALYTICS_RAW_DAYS,
// salts older than yesterday, deleted properties' data, and a deleted workspace's data.
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { DAY, iso } from '../platform/clock.js';
import type { RetentionRule, WorkspaceDataStep } from '../platform/lifecycle.js';
import { deleteOldSalts } from './visitor.js';

async function deleteById(db: Db, table: 'analytics_events' | 'analytics_visits', ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  return Number((await db.deleteFrom(table).where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
}

/**
 * Up to `batch` ids of rows older than `before`, property by property: the tables are indexed by
 * property and time (what the reads need), not by time alone (an index each event would pay for).
 */
async function oldIds(db: Db, table: 'analytics_events' | 'analytics_visits', before: string, batch: number): Promise<string[]> {
  const ids: string[] = [];
  for (const p of await db.selectFrom('analytics_properties').select('id').orderBy('id').execute()) {
    const rows =
      table === 'analytics_events'
        ? await db
            .selectFrom(table)
            .select('id')
            .where('property_id', '=', p.id)
            .where('at', '<', before)
            .limit(batch - ids.length)
            .execute()
        : // A visit ending before `before` started on that day or earlier: the day bounds the index range.
          await db
            .selectFrom(table)
            .select('id')
            .where('property_id', '=', p.id)
            .where('day', '<=', before.slice(0, 10))
            .where('last_at', '<', before)
            .limit(batch - ids.length)
            .execute();
    for (const r of rows) ids.push(r.id);
    if (ids.length >= batch) break;
  }
  return ids;
}

const rawRule = (table: 'analytics_events' | 'analytics_visits'): RetentionRule => ({
  name: table,
  shortBatchIsLast: true,
  async deleteBatch(ctx, now, batch) {
    const before = iso(now.getTime() - ctx.config.analytics.rawDays * DAY);
    return deleteById(ctx.db, table, await oldIds(ctx.db, table, before, batch));
  },
});
const rawEventsRule = rawRule('analytics_events');
const rawVisitsRule = rawRule('analytics_visits');

const saltsRule: RetentionRule = { name: 'analytics_salts', deleteBatch: (ctx, now) => deleteOldSalts(ctx.db, now) };

/** One batch of a property's (or a workspace's) analytics rows; 0 when none is left. */
async function deleteDataBatch(ctx: Pick<Ctx, 'db'>, column: 'property_id' | 'workspace_id', id: string, batch: number): Promise<number> {
  // Events and visits (and the kept values below) by the workspace's properties, deleted after their data: the tables have no workspace index.
  const properties =
    column === 'property_id' ? [id] : (await ctx.db.selectFrom('analytics_properties').select('id').where('workspace_id', '=', id).execute()).map((p) => p.id);
  for (const table of ['analytics_events', 'analytics_visits'] as const) {
    for (const propertyId of properties) {
      const ids = (await ctx.db.selectFrom(table).select('id').where('property_id', '=', propertyId).limit(batch).execute()).map((r) => r.id);
      if (ids.length) return deleteById(ctx.db, table, ids);
    }
  }
  // A day at a time: these hold only the days not yet rolled up.
  for (const table of ['analytics_day_visitors', 'analytics_day_totals', 'analytics_day_values'] as const) {
    const first = await ctx.db.selectFrom(table).select('day').where(column, '=', id).orderBy('day').limit(1).executeTakeFirst();
    if (first) return Number((await ctx.db.deleteFrom(table).where(column, '=', id).where('day', '=', first.day).executeTakeFirst()).numDeletedRows);
  }
  for (const propertyId of properties) {
    const first = await ctx.db
      .selectFrom('analytics_day_value_visitors')
      .select('day')
      .where('property_id', '=', propertyId)
      .orderBy('day')
      .limit(1)
      .executeTakeFirst();
    if (first)
      return Number(
        (await ctx.db.deleteFrom('analytics_day_value_visitors').where('property_id', '=', propertyId).where('day', '=', first.day).executeTakeFirst())
          .numDeletedRows,
      );
  }
  const rollup = await ctx.db.selectFrom('analytics_rollups').select('day').where(column, '=', id).orderBy('day').limit(1).offset(batch).executeTakeFirst();
  let q = ctx.db.deleteFrom('analytics_rollups').where(column, '=', id);
  if (rollup) q = q.where('day', '<', rollup.day);
  const n = Number((await q.executeTakeFirst()).numDeletedRows);
  return n;
}

/** Deleted properties: their data in batches, then the row. */
const deletedPropertiesRule: RetentionRule = {
  name: 'analytics_deleted_properties',
  async deleteBatch(ctx, _now, batch) {
    const p = await ctx.db.selectFrom('analytics_properties').select('id').where('deleted_at', 'is not', null).orderBy('deleted_at').executeTakeFirst();
    if (!p) return 0;
    const n = await deleteDataBatch(ctx, 'property_id', p.id, batch);
    if (n) return n;
    return Number((await ctx.db.deleteFrom('analytics_properties').where('id', '=', p.id).executeTakeFirst()).numDeletedRows);
  },
};

export const analyticsRetentionRules: RetentionRule[] = [rawEventsRule, rawVisitsRule, saltsRule, deletedPropertiesRule];

export const analyticsWorkspaceStep: WorkspaceDataStep = {
  name: 'analytics',
  async deleteBatch(ctx, workspaceId, batch) {
    let rows = await deleteDataBatch(ctx, 'workspace_id', workspaceId, batch);
    if (!rows) {
      for (const table of ['analytics_conversation_visits', 'analytics_usage', 'analytics_limits', 'analytics_properties'] as const) {
        rows += Number((await ctx.db.deleteFrom(table).where('workspace_id', '=', workspaceId).executeTakeFirst()).numDeletedRows);
      }
    }
    return { rows, files: 0 };
  },
};
