// Past days' report totals, medians and p90s, kept once computed (report_day_figures, migration
// 0072). A day's report rows are written on that day only (src/reports/statistics.ts takes the day of
// the reply, close or rating being recorded), so a day before yesterday no longer changes; triggers
// on report_days and report_durations delete a day's kept rows of every scope whenever its rows do
// change anyway (a workspace's deletion, a row written by hand), so a kept figure is never stale.
import { createHash } from 'node:crypto';
import { readRows } from '../db/readers.js';
import type { Db } from '../db/schema.js';

/** Which rows a report's figures cover: the inboxes it reaches (null: all) and the member, if any. */
export function scopeKey(inboxIds: readonly string[] | null, memberId: string | undefined): string {
  const text = `${inboxIds === null ? '*' : [...inboxIds].sort().join(',')}|${memberId ?? ''}`;
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

export interface KeptDays {
  db: Db;
  workspaceId: string;
  scope: string;
  /** Days before this one are kept (and read back); later ones are always computed. */
  before: string;
}

/** The kept figures (KeptDay of ./service.ts) of those of `days` that are kept. */
export async function readKeptDays<Figures>(kept: KeptDays, days: readonly string[]): Promise<Map<string, Figures>> {
  const from = days[0];
  const to = days[days.length - 1];
  if (!(from < kept.before)) return new Map();
  const rows = await readRows(
    kept.db,
    kept.db
      .selectFrom('report_day_figures')
      .select(['day', 'figures'])
      .where('workspace_id', '=', kept.workspaceId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .where('day', '<', kept.before)
      .where('scope', '=', kept.scope),
  );
  return new Map(rows.map((r) => [r.day, JSON.parse(r.figures) as Figures]));
}

export async function keepDays<Figures>(kept: KeptDays, figures: Map<string, Figures>): Promise<void> {
  const rows = [...figures]
    .filter(([day]) => day < kept.before)
    .map(([day, f]) => ({ workspace_id: kept.workspaceId, day, scope: kept.scope, figures: JSON.stringify(f) }));
  for (let i = 0; i < rows.length; i += 200)
    await kept.db
      .insertInto('report_day_figures')
      .values(rows.slice(i, i + 200))
      .onConflict((oc) => oc.columns(['workspace_id', 'day', 'scope']).doNothing())
      .execute();
}

/** Workspace deletion: its kept figures, a batch at a time; the number removed. */
export async function deleteWorkspaceDayFigures(db: Db, workspaceId: string, batch: number): Promise<number> {
  const days = await db
    .selectFrom('report_day_figures')
    .select('day')
    .distinct()
    .where('workspace_id', '=', workspaceId)
    .orderBy('day')
    .limit(Math.max(1, Math.floor(batch / 50)))
    .execute();
  if (!days.length) return 0;
  const r = await db
    .deleteFrom('report_day_figures')
    .where('workspace_id', '=', workspaceId)
    .where(
      'day',
      'in',
      days.map((d) => d.day),
    )
    .executeTakeFirst();
  return Math.max(1, Number(r.numDeletedRows));
}
