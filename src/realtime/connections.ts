// Live connection records: every realtime socket (members and API keys on /v1/realtime, contacts
// from the widget or an SDK) has a row that its heartbeats keep fresh. A contact is "online" while
// it has an open row seen within CONNECTION_STALE_MS; rows of a process that died simply go stale.
import { sql } from 'kysely';
import type { Ctx } from '../context.js';
import type { ConnectionKind } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';

type C = Pick<Ctx, 'db' | 'clock'>;

/** How often a live connection is marked as seen (and a heartbeat frame is sent). */
export const HEARTBEAT_MS = 25_000;
/** A connection not seen for this long no longer counts as live. */
export const CONNECTION_STALE_MS = 2 * HEARTBEAT_MS + 10_000;
/** Stale (closed or silent) connection records are kept this long (spec Limits), then the retention job removes them. */
export const STALE_CONNECTION_KEEP_MS = 60 * 60_000;

export async function markConnection(
  ctx: C,
  input: { workspaceId: string; kind: ConnectionKind; subjectId: string; inboxId?: string | null },
): Promise<{ id: string }> {
  const now = ctx.clock.now();
  const id = newId('rt', now.getTime());
  await ctx.db
    .insertInto('realtime_connections')
    .values({
      id,
      workspace_id: input.workspaceId,
      kind: input.kind,
      subject_id: input.subjectId,
      inbox_id: input.inboxId ?? null,
      connected_at: iso(now),
      last_seen_at: iso(now),
      closed_at: null,
    })
    .execute();
  return { id };
}

/** Called on every heartbeat of a live connection. */
export async function touchConnection(ctx: C, id: string): Promise<void> {
  await ctx.db
    .updateTable('realtime_connections')
    .set({ last_seen_at: iso(ctx.clock.now()) })
    .where('id', '=', id)
    .where('closed_at', 'is', null)
    .execute();
}

export async function closeConnection(ctx: C, id: string): Promise<void> {
  const now = iso(ctx.clock.now());
  await ctx.db.updateTable('realtime_connections').set({ closed_at: now, last_seen_at: now }).where('id', '=', id).where('closed_at', 'is', null).execute();
}

/** Of the given contacts, those with a live connection from the widget or an SDK right now. */
export async function onlineContacts(ctx: C, contactIds: readonly string[]): Promise<Set<string>> {
  if (contactIds.length === 0) return new Set();
  const freshSince = iso(ctx.clock.now().getTime() - CONNECTION_STALE_MS);
  // Plain SQL: this runs for every recorded event.
  const { rows } = await sql<{ subject_id: string }>`select distinct subject_id from realtime_connections
    where kind = 'contact' and subject_id in (${sql.join([...new Set(contactIds)])})
      and last_seen_at >= ${freshSince} and closed_at is null`.execute(ctx.db);
  return new Set(rows.map((r) => r.subject_id));
}

export async function isContactOnline(ctx: C, contactId: string): Promise<boolean> {
  return (await onlineContacts(ctx, [contactId])).has(contactId);
}

/**
 * Of the given people, those who had the panel (a member connection) open at some time since
 * `since`: a live connection is seen every heartbeat, a closed one last at its close.
 */
export async function membersConnectedSince(ctx: C, personIds: readonly string[], since: Date): Promise<Set<string>> {
  if (personIds.length === 0) return new Set();
  const rows = await ctx.db
    .selectFrom('realtime_connections')
    .select('subject_id')
    .distinct()
    .where('kind', '=', 'member')
    .where('subject_id', 'in', [...new Set(personIds)])
    .where('last_seen_at', '>=', iso(since))
    .execute();
  return new Set(rows.map((r) => r.subject_id));
}

/**
 * Deletes connection records that went stale (closed, or silent past CONNECTION_STALE_MS) more
 * than STALE_CONNECTION_KEEP_MS ago, at most `batch` per call. For the retention job.
 */
export async function deleteStaleConnections(ctx: C, batch = 10_000): Promise<number> {
  const before = iso(ctx.clock.now().getTime() - STALE_CONNECTION_KEEP_MS - CONNECTION_STALE_MS);
  const closedBefore = iso(ctx.clock.now().getTime() - STALE_CONNECTION_KEEP_MS);
  const result = await ctx.db
    .deleteFrom('realtime_connections')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('realtime_connections as c')
        .select('c.id')
        .where((w) => w.or([w('c.last_seen_at', '<', before), w.and([w('c.closed_at', 'is not', null), w('c.closed_at', '<', closedBefore)])]))
        .limit(batch),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Workspace deletion: at most `batch` of a deleted workspace's connection records per call. */
export async function deleteWorkspaceConnections(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  const result = await ctx.db
    .deleteFrom('realtime_connections')
    .where('id', 'in', (eb) => eb.selectFrom('realtime_connections as c').select('c.id').where('c.workspace_id', '=', workspaceId).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
