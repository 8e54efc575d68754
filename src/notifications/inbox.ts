// The notification inbox: what the bell shows, kept on the server (so the unread count survives a
// reload and is the same on every device). A member's notifications of one workspace, newest first,
// the ones they still see (notificationsSeenNow); read or unread; kept NOTIFICATION_KEEP_DAYS days
// (src/notifications/lifecycle rule). Marking read records a realtime-only `notification.read`
// event for the member, so their other panels update their bell at once.
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { NotificationTrigger } from '../db/schema.js';
import { announceEvents, recordEvent } from '../events/service.js';
import { iso } from '../platform/clock.js';
import { forbidden, notFound } from '../platform/errors.js';
import { encodeCursor } from '../platform/pagination.js';
import { notificationsSeenNow, notificationUrl } from './service.js';

type C = Pick<Ctx, 'db' | 'clock' | 'config' | 'hub'>;

export interface InboxNotification {
  id: string;
  trigger: NotificationTrigger;
  conversation_id: string | null;
  channel_id: string | null;
  inbox_id: string | null;
  title: string;
  body: string;
  url: string;
  created_at: string;
  read_at: string | null;
}

/** Rows read per statement while a page is filled with notifications the member still sees. */
const SCAN_BATCH = 200;

function memberOf(access: Access): string {
  if (access.actor.kind !== 'member') throw forbidden('notifications belong to members; API keys have none');
  return access.actor.personId;
}

function baseQuery(ctx: Pick<Ctx, 'db'>, personId: string, workspaceId: string) {
  return ctx.db
    .selectFrom('notifications')
    .select(['id', 'workspace_id', 'trigger', 'conversation_id', 'channel_id', 'title', 'body', 'created_at', 'read_at'])
    .where('person_id', '=', personId)
    .where('workspace_id', '=', workspaceId)
    .where('in_panel', '=', 1);
}

/** How many of the member's notifications in this workspace are unread (of those they still see). */
export async function unreadCount(ctx: Pick<Ctx, 'db' | 'clock'>, personId: string, workspaceId: string): Promise<number> {
  const rows = await baseQuery(ctx, personId, workspaceId).where('read_at', 'is', null).execute();
  return (await notificationsSeenNow(ctx, personId, rows)).length;
}

/** A page of the member's notifications, newest first; `unread`: only unread (true) or only read (false). */
export async function listNotifications(
  ctx: C,
  access: Access,
  input: { unread?: boolean; limit: number; before?: string },
): Promise<{ data: InboxNotification[]; next_cursor: string | null; unread_count: number }> {
  const personId = memberOf(access);
  const kept: Awaited<ReturnType<typeof notificationsSeenNow<NotificationRow>>> = [];
  let before = input.before;
  for (;;) {
    let q = baseQuery(ctx, personId, access.workspaceId);
    if (input.unread === true) q = q.where('read_at', 'is', null);
    if (input.unread === false) q = q.where('read_at', 'is not', null);
    if (before) q = q.where('id', '<', before);
    const rows = await q.orderBy('id', 'desc').limit(SCAN_BATCH).execute();
    kept.push(...(await notificationsSeenNow(ctx, personId, rows)));
    if (kept.length > input.limit || rows.length < SCAN_BATCH) break;
    before = rows[rows.length - 1].id;
  }
  const page = kept.slice(0, input.limit);
  return {
    data: page.map((n) => formatNotification(ctx, n)),
    next_cursor: kept.length > input.limit ? encodeCursor({ before: page[page.length - 1].id }) : null,
    unread_count: await unreadCount(ctx, personId, access.workspaceId),
  };
}

type NotificationRow = {
  id: string;
  workspace_id: string;
  trigger: NotificationTrigger;
  conversation_id: string | null;
  channel_id: string | null;
  inbox_id: string;
  title: string;
  body: string;
  created_at: string;
  read_at: string | null;
};

function formatNotification(ctx: Pick<Ctx, 'config'>, n: NotificationRow): InboxNotification {
  return {
    id: n.id,
    trigger: n.trigger,
    conversation_id: n.conversation_id,
    channel_id: n.channel_id,
    inbox_id: n.inbox_id,
    title: n.title,
    body: n.body,
    url: notificationUrl(ctx.config.publicUrl, n),
    created_at: n.created_at,
    read_at: n.read_at,
  };
}

/** Tells the member's panels (realtime) which notifications were read and how many stay unread. */
async function tellRead(ctx: C, personId: string, workspaceId: string, read: { ids: string[] } | { all: true }): Promise<number> {
  const count = await unreadCount(ctx, personId, workspaceId);
  await recordEvent(
    { db: ctx.db, clock: ctx.clock },
    {
      workspaceId,
      personId,
      type: 'notification.read',
      occurredAt: ctx.clock.now(),
      data: { ...('all' in read ? { all: true, notification_ids: [] } : { all: false, notification_ids: read.ids }), unread_count: count },
      webhook: false,
    },
  );
  announceEvents(ctx);
  return count;
}

/** Marks one of the member's notifications read (once: reading it again keeps the first time). 404 for anyone else's. */
export async function markNotificationRead(ctx: C, access: Access, id: string): Promise<{ notification: InboxNotification; unread_count: number }> {
  const personId = memberOf(access);
  const row = await baseQuery(ctx, personId, access.workspaceId).where('id', '=', id).executeTakeFirst();
  const [seen] = row ? await notificationsSeenNow(ctx, personId, [row]) : [];
  if (!seen) throw notFound('notification');
  let readAt = seen.read_at;
  let count: number;
  if (readAt === null) {
    readAt = iso(ctx.clock.now());
    await ctx.db.updateTable('notifications').set({ read_at: readAt }).where('id', '=', id).where('read_at', 'is', null).execute();
    count = await tellRead(ctx, personId, access.workspaceId, { ids: [id] });
  } else count = await unreadCount(ctx, personId, access.workspaceId);
  return { notification: formatNotification(ctx, { ...seen, read_at: readAt }), unread_count: count };
}

/** Marks every unread notification of the member in this workspace read. */
export async function markAllNotificationsRead(ctx: C, access: Access): Promise<{ marked: number; unread_count: number }> {
  const personId = memberOf(access);
  const result = await ctx.db
    .updateTable('notifications')
    .set({ read_at: iso(ctx.clock.now()) })
    .where('person_id', '=', personId)
    .where('workspace_id', '=', access.workspaceId)
    .where('read_at', 'is', null)
    .executeTakeFirst();
  const marked = Number(result.numUpdatedRows);
  const count = marked ? await tellRead(ctx, personId, access.workspaceId, { all: true }) : await unreadCount(ctx, personId, access.workspaceId);
  return { marked, unread_count: count };
}
