// Queries of broadcasts and their recipients shared by the service, the sender and the feedback intake.
import type { Selectable } from 'kysely';
import type { Ctx } from '../context.js';
import type { BroadcastsTable, Db, PauseReason } from '../db/schema.js';
import { iso } from '../platform/clock.js';

export type BroadcastRow = Selectable<BroadcastsTable>;

/** Scheduled and sending broadcasts are the running ones (a member's or the server's pause stops them). */
export const RUNNING: BroadcastRow['status'][] = ['scheduled', 'sending'];

export async function findBroadcast(db: Db, id: string): Promise<BroadcastRow | undefined> {
  return db.selectFrom('broadcasts').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Pauses the running broadcasts that match (a workspace, optionally one inbox and some channels)
 * with the reason; returns their ids. Their send jobs see the status and stop. They are counted in
 * svc_broadcasts_paused_total as the change is written (the callers' transactions hold little else).
 */
export async function pauseBroadcasts(
  tx: Pick<Ctx, 'db' | 'clock' | 'metrics'>,
  filter: { workspaceId: string; inboxId?: string; channelIds?: string[]; broadcastId?: string },
  reason: PauseReason,
  detail: string | null,
): Promise<string[]> {
  if (filter.channelIds && filter.channelIds.length === 0) return [];
  const now = iso(tx.clock.now());
  let q = tx.db
    .updateTable('broadcasts')
    .set({ status: 'paused', pause_reason: reason, pause_detail: detail, paused_at: now, continues_at: null, updated_at: now })
    .where('workspace_id', '=', filter.workspaceId)
    .where('status', 'in', RUNNING);
  if (filter.inboxId) q = q.where('inbox_id', '=', filter.inboxId);
  if (filter.channelIds) q = q.where('channel_id', 'in', filter.channelIds);
  if (filter.broadcastId) q = q.where('id', '=', filter.broadcastId);
  const rows = await q.returning('id').execute();
  if (rows.length) tx.metrics.broadcastsPaused.inc({ reason }, rows.length);
  return rows.map((r) => r.id);
}

/** Broadcasts not finished yet (scheduled, sending or paused) that send through one of these channels. */
export async function unfinishedBroadcastsThrough(db: Db, channelIds: readonly string[]): Promise<string[]> {
  if (channelIds.length === 0) return [];
  const rows = await db
    .selectFrom('broadcasts')
    .select('id')
    .where('channel_id', 'in', [...channelIds])
    .where('status', 'in', ['scheduled', 'sending', 'paused'])
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/** An inbox is deleted: its broadcasts that have not finished are cancelled (the sender stops at its next batch). */
export async function cancelInboxBroadcasts(tx: Pick<Ctx, 'db' | 'clock'>, inboxId: string): Promise<string[]> {
  const now = iso(tx.clock.now());
  const rows = await tx.db
    .updateTable('broadcasts')
    .set({ status: 'cancelled', finished_at: now, continues_at: null, updated_at: now })
    .where('inbox_id', '=', inboxId)
    .where('status', 'not in', ['sent', 'cancelled'])
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Broadcasts not finished that take their audience from the segment and have not turned it into recipients yet. */
export async function broadcastsWaitingOnSegment(db: Db, segmentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('broadcasts')
    .select('id')
    .where('segment_id', '=', segmentId)
    .where('segment_resolved_at', 'is', null)
    .where('status', 'in', ['draft', 'scheduled', 'sending', 'paused'])
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}
