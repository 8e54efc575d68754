// The run log (issue 36): one row per rule that looked at a conversation, kept 30 days (retention
// in src/lifecycle/registry.ts). Newest first, by id (time-sortable).
import { z } from 'zod';
import { type Access, authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { AutomationRunsTable } from '../db/schema.js';
import { DAY, iso } from '../platform/clock.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import type { Action } from './schema.js';

export const RUN_KEEP_DAYS = 30;

export function formatRun(r: AutomationRunsTable) {
  return {
    id: r.id,
    rule_id: r.rule_id,
    rule_name: r.rule_name,
    conversation_id: r.conversation_id,
    trigger: r.trigger,
    outcome: r.outcome,
    reason: r.reason,
    actions: JSON.parse(r.actions) as Action[],
    created_at: r.created_at,
  };
}

const runCursor = z.object({ id: z.string() });

export async function listRuns(ctx: Pick<Ctx, 'db'>, access: Access, input: { ruleId?: string; conversationId?: string; limit?: number; cursor?: string }) {
  authorize(access, 'automation:manage');
  const limit = input.limit ?? 50;
  const after = decodeCursor(input.cursor, runCursor);
  let q = ctx.db.selectFrom('automation_runs').selectAll().where('workspace_id', '=', access.workspaceId);
  if (input.ruleId) q = q.where('rule_id', '=', input.ruleId);
  if (input.conversationId) q = q.where('conversation_id', '=', input.conversationId);
  if (after) q = q.where('id', '<', after.id);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return toPage(rows, limit, (r) => ({ id: r.id }), formatRun);
}

/** Retention: runs older than 30 days. */
export async function deleteOldRuns(ctx: Pick<Ctx, 'db'>, now: Date, batch: number): Promise<number> {
  const before = iso(new Date(now.getTime() - RUN_KEEP_DAYS * DAY));
  const ids = await ctx.db.selectFrom('automation_runs').select('id').where('created_at', '<', before).limit(batch).execute();
  if (!ids.length) return 0;
  const r = await ctx.db
    .deleteFrom('automation_runs')
    .where(
      'id',
      'in',
      ids.map((i) => i.id),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
