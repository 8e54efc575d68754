// Notifications to the team. The reaction (./reaction.ts) stores a `notifications.event` job with
// the event; the job decides who is told and stores every delivery in one transaction: the
// `notifications` row (unique per event and member, so a job run again tells nobody twice), a
// realtime-only `notification` event addressed to the member (open panels), one
// `notifications.push` job per push subscription, and a line for the batched e-mail when the
// member has had no panel open for PANEL_AWAY_MS (./mail.ts sends it).
//
// Triggers: a new conversation in an inbox the member sees; a conversation assigned to them; a
// customer's message in a conversation assigned to them (not its first message: that is the new
// conversation); a mention in a note (./mentions.ts). Never: for the member's own action, for spam,
// for imported conversations, for history (imported and synced history record no events at all).
import { currentAccessOf } from '../auth/credentials.js';
import { inboxesOfChannels } from '../channels/store.js';
import type { Ctx } from '../context.js';
import { inboxesOfConversations } from '../conversations/store.js';
import { reusableInsert } from '../db/reusable-query.js';
import type { Db, NotificationTrigger } from '../db/schema.js';
import { announceEvents, canSeeEvent, type EventRow, findEvents, recordEvent, viewerFor } from '../events/service.js';
import { type InboxMember, membersSeeingInbox } from '../members/service.js';
import { iso, MINUTE } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { enqueue } from '../platform/jobs.js';
import { pushSubscriptionsOf } from '../push/service.js';
import { membersConnectedSince } from '../realtime/connections.js';
import { mentionedMembers } from './mentions.js';
import { preferencesOf } from './preferences.js';
import type { NotifyEventPayload } from './reaction.js';
import { notificationText, slaTargetName } from './text.js';

// One per member told of an event: compiled once (a mail's batch of jobs stores one per member).
const insertNotification = reusableInsert('notifications', (q) => q.onConflict((oc) => oc.columns(['event_id', 'person_id']).doNothing()));

export const PUSH_JOB = 'notifications.push';
export const MAIL_JOB = 'notifications.mail';
/** A member without a panel open (a realtime connection) for this long gets e-mail instead. */
export const PANEL_AWAY_MS = 5 * MINUTE;
const PREVIEW_CHARS = 200;

export interface PushJobPayload {
  subscription_id: string;
  notification_id: string;
  message: PushMessage;
}

/** What the service worker gets (ui/panel/public/sw.js shows it). */
export interface PushMessage {
  title: string;
  body: string;
  url: string;
  tag: string;
  /** Null for a notification about a channel (its url is the channel's inbox settings). */
  conversation_id: string | null;
}

type EventData = {
  conversation?: { id: string; subject: string | null; spam?: boolean; imported?: boolean; assignee_id?: string | null; created_at: string };
  contact?: { name: string | null; emails?: string[] } | null;
  message?: {
    id: string;
    kind: string;
    direction: string;
    body: string;
    created_at: string;
    author?: { type: string; member_id?: string | null };
    details?: { held?: string } | null;
  };
  sla_notice?: { target: string; kind: 'warning' | 'breached'; due_at: string };
  /** conversation.automation_notice: an automation rule's notify_members action (src/automation). */
  automation_notice?: { rule_name: string; member_ids: string[] };
  /** conversation.sign_in_required and channel.sign_in_required (src/mail-accounts/revoked.ts). */
  sign_in_required?: { channel_name: string; provider_name: string; error: string | null; stopped?: 'sending' | 'reading' };
  /** channel.sign_in_required: the channel it is about (there is no conversation). */
  channel?: { id: string; name: string; inbox_id: string };
};

/** Where a notification leads in the panel: its conversation, or the settings of the channel's inbox. */
export function notificationUrl(publicUrl: string, n: { conversation_id: string | null; inbox_id: string | null }): string {
  return n.conversation_id ? `${publicUrl}/conversations/${n.conversation_id}` : `${publicUrl}/settings/inboxes/${n.inbox_id ?? ''}`;
}

function preview(text: string | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim().slice(0, PREVIEW_CHARS);
}

function contactName(data: EventData): string | null {
  const c = data.contact;
  if (!c) return null;
  return c.name ?? c.emails?.[0] ?? null;
}

function memberName(m: InboxMember | undefined): string | null {
  return m ? (m.name ?? m.email.split('@')[0]) : null;
}

/** Who is told what about one stored event. */
type Target = { member: InboxMember; trigger: NotificationTrigger };

function targetsOf(row: { type: string }, data: EventData, payload: NotifyEventPayload, members: InboxMember[]): Target[] {
  const managers = () => members.filter((m) => m.role === 'owner' || m.role === 'admin').map((member) => ({ member, trigger: 'sign_in_required' as const }));
  if (row.type === 'channel.sign_in_required') return data.channel ? managers() : [];
  const conversation = data.conversation;
  if (!conversation || conversation.spam) return [];
  const byId = new Map(members.map((m) => [m.personId, m]));
  const others = (m: InboxMember | undefined): m is InboxMember => !!m && m.personId !== payload.actor;
  switch (row.type) {
    case 'conversation.created':
      if (conversation.imported) return [];
      return members.filter(others).map((member) => ({ member, trigger: 'new_conversation' }));
    case 'conversation.updated': {
      if (payload.woke) {
        const assignee = conversation.assignee_id ? byId.get(conversation.assignee_id) : undefined;
        return assignee ? [{ member: assignee, trigger: 'snooze_ended' }] : [];
      }
      const member = payload.assigned_to ? byId.get(payload.assigned_to) : undefined;
      return others(member) ? [{ member, trigger: 'assigned' }] : [];
    }
    case 'conversation.sla': {
      const trigger = data.sla_notice?.kind === 'breached' ? 'sla_breached' : 'sla_warning';
      const assignee = conversation.assignee_id ? byId.get(conversation.assignee_id) : undefined;
      if (conversation.assignee_id) return assignee ? [{ member: assignee, trigger }] : [];
      return members.map((member) => ({ member, trigger }));
    }
    case 'conversation.sign_in_required':
      return managers();
    case 'conversation.automation_notice': {
      const named = new Set(data.automation_notice?.member_ids ?? []);
      return members.filter((m) => named.has(m.personId)).map((member) => ({ member, trigger: 'mention' }));
    }
    case 'message.created': {
      const message = data.message;
      if (!message) return [];
      if (message.kind === 'message' && message.direction === 'in') {
        // The first message of a conversation is told as the new conversation.
        if (message.created_at === conversation.created_at) return [];
        const member = conversation.assignee_id ? byId.get(conversation.assignee_id) : undefined;
        return others(member) ? [{ member, trigger: 'customer_reply' }] : [];
      }
      // A reply scheduled "unless the customer answers first" that was kept back: its author is told.
      if (message.kind === 'note' && message.details?.held && message.author?.member_id) {
        const author = byId.get(message.author.member_id);
        return author ? [{ member: author, trigger: 'reply_held' }] : [];
      }
      if (message.kind === 'note')
        return mentionedMembers(message.body, members)
          .filter(others)
          .map((member) => ({ member, trigger: 'mention' }));
      return [];
    }
    default:
      return [];
  }
}

/** The `notifications.event` job for one event; see notifyEvents. */
export async function notifyEvent(ctx: Ctx, payload: NotifyEventPayload): Promise<number> {
  return notifyEvents(ctx, [payload]);
}

/**
 * The `notifications.event` jobs, claimed together (src/platform/jobs.ts runBatch): tells the members
 * each event concerns, on the channels each chose. The reads are made once for all the events
 * (events, each inbox's members, preferences, open panels, push subscriptions) and everything is
 * stored in one transaction, so a batch run again (after a crash, or one job at a time after the
 * batch failed) tells nobody twice: the notifications are unique per (event, member). Returns how
 * many notifications were stored.
 */
export async function notifyEvents(
  ctx: Ctx,
  payloads: readonly NotifyEventPayload[],
  /** Run inside the transaction that stores the notifications (the job runner removes the batch's jobs there). */
  opts: { alsoInTransaction?: (trx: Db) => Promise<void> } = {},
): Promise<number> {
  const rows = new Map((await findEvents(ctx, [...new Set(payloads.map((p) => p.event_id))])).map((r) => [r.id, r]));
  const membersByInbox = new Map<string, InboxMember[]>();
  const work: { row: EventRow & { inbox_id: string }; data: EventData; members: InboxMember[]; targets: Target[] }[] = [];
  for (const payload of payloads) {
    const row = rows.get(payload.event_id);
    if (!row?.inbox_id) continue;
    const inboxKey = `${row.workspace_id}/${row.inbox_id}`;
    let members = membersByInbox.get(inboxKey);
    if (!members) {
      members = await membersSeeingInbox(ctx, row.workspace_id, row.inbox_id);
      membersByInbox.set(inboxKey, members);
    }
    const data = JSON.parse(row.data) as EventData;
    const targets = targetsOf(row, data, payload, members);
    if (targets.length) work.push({ row: { ...row, inbox_id: row.inbox_id }, data, members, targets });
  }
  if (work.length === 0) return 0;
  const people = [...new Set(work.flatMap((w) => w.targets.map((t) => t.member.personId)))];
  const preferences = await preferencesOf(ctx, people);
  const now = ctx.clock.now();
  const atPanel = await membersConnectedSince(ctx, people, new Date(now.getTime() - PANEL_AWAY_MS));
  const subscriptions = ctx.config.vapid ? await pushSubscriptionsOf(ctx, people) : [];
  let told = 0;
  await ctx.db.transaction().execute(async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    for (const { row, data, members, targets } of work) {
      // Every event but channel.sign_in_required is about a conversation.
      const conversation = data.conversation;
      const channelId = conversation ? null : (data.channel?.id ?? null);
      const conversationId = conversation?.id ?? null;
      const authorName = data.automation_notice?.rule_name ?? memberName(members.find((m) => m.personId === data.message?.author?.member_id));
      const url = notificationUrl(ctx.config.publicUrl, { conversation_id: conversationId, inbox_id: row.inbox_id });
      for (const { member, trigger } of targets) {
        const text = notificationText(member.locale, trigger, {
          subject: conversation?.subject ?? null,
          contact: contactName(data),
          author: authorName,
          preview: preview(
            trigger === 'sign_in_required'
              ? (data.sign_in_required?.error ?? undefined)
              : trigger === 'customer_reply' || trigger === 'mention' || trigger === 'reply_held'
                ? data.message?.body
                : undefined,
          ),
          target: data.sla_notice
            ? slaTargetName(member.locale, data.sla_notice.target)
            : data.sign_in_required
              ? `${data.sign_in_required.channel_name} (${data.sign_in_required.provider_name})`
              : undefined,
          stopped: data.sign_in_required?.stopped,
        });
        const id = newId('ntf', now.getTime());
        const inserted = await insertNotification(trx, {
          id,
          person_id: member.personId,
          workspace_id: row.workspace_id,
          event_id: row.id,
          trigger,
          conversation_id: conversationId,
          channel_id: channelId,
          title: text.title,
          body: text.body,
          created_at: iso(now),
          in_panel: preferences.get(member.personId)![trigger].realtime ? 1 : 0,
        });
        if (inserted === 0) continue;
        told++;
        const wants = preferences.get(member.personId)!;
        const shown = {
          id,
          trigger,
          conversation_id: conversationId,
          channel_id: channelId,
          inbox_id: row.inbox_id,
          title: text.title,
          body: text.body,
          url,
          created_at: iso(now),
          read_at: null,
        };
        if (wants[trigger].realtime) {
          await recordEvent(tx, {
            workspaceId: row.workspace_id,
            // The conversation's (or channel's) inbox: the member sees the notification only while they see the inbox.
            inboxId: row.inbox_id,
            personId: member.personId,
            type: 'notification',
            occurredAt: now,
            data: { notification: shown },
            webhook: false,
          });
        }
        if (wants[trigger].push) {
          const message: PushMessage = { title: text.title, body: text.body, url, tag: `svc-${conversationId ?? channelId}`, conversation_id: conversationId };
          for (const sub of subscriptions.filter((s) => s.person_id === member.personId)) {
            const job: PushJobPayload = { subscription_id: sub.id, notification_id: id, message };
            await enqueue(trx, ctx.clock, { kind: PUSH_JOB, payload: job, uniqueKey: `${PUSH_JOB}:${id}:${sub.id}` });
          }
        }
        if (wants[trigger].email && ctx.config.smtp && !atPanel.has(member.personId)) {
          await trx
            .insertInto('notification_mail_lines')
            .values({ notification_id: id, person_id: member.personId, created_at: iso(now) })
            .execute();
          // One mail job per member: while it waits (the 10 minutes after a mail), lines gather.
          await enqueue(trx, ctx.clock, { kind: MAIL_JOB, payload: { person_id: member.personId }, uniqueKey: `${MAIL_JOB}:${member.personId}` });
        }
      }
    }
    await opts.alsoInTransaction?.(trx);
  });
  if (told) announceEvents(ctx);
  return told;
}

/**
 * The notifications of one member that they would still be shown now, for what goes out after they
 * were told (a push, the batched mail): meanwhile their inbox limit may have narrowed, their role or
 * membership changed, the workspace gone, or the conversation moved to another inbox. The rule is
 * the stream's (canSeeEvent for the member's `notification` event) over the member's current access
 * and the conversation's current inbox (a channel notification: the channel's inbox); a
 * conversation or channel that is gone is not shown. Each kept one comes with that inbox.
 */
export async function notificationsSeenNow<N extends { workspace_id: string; conversation_id: string | null; channel_id: string | null }>(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  personId: string,
  notifications: readonly N[],
): Promise<(N & { inbox_id: string })[]> {
  if (notifications.length === 0) return [];
  const conversationIds = notifications.flatMap((n) => (n.conversation_id ? [n.conversation_id] : []));
  const channelIds = [...new Set(notifications.flatMap((n) => (!n.conversation_id && n.channel_id ? [n.channel_id] : [])))];
  const inboxOf = await inboxesOfConversations(ctx.db, conversationIds);
  const channelInbox = await inboxesOfChannels(ctx.db, channelIds);
  const viewers = new Map<string, ReturnType<typeof viewerFor> | undefined>();
  const out: (N & { inbox_id: string })[] = [];
  for (const n of notifications) {
    const inboxId = n.conversation_id ? inboxOf.get(n.conversation_id) : n.channel_id ? channelInbox.get(n.channel_id) : undefined;
    if (!inboxId) continue;
    if (!viewers.has(n.workspace_id)) {
      const access = await currentAccessOf(ctx, n.workspace_id, { type: 'member', id: personId }, 'notification');
      viewers.set(n.workspace_id, access && viewerFor(access));
    }
    const viewer = viewers.get(n.workspace_id);
    const asEvent = { type: 'notification', audience: 'all' as const, person_id: personId, related_inbox_ids: JSON.stringify([inboxId]) };
    if (viewer && canSeeEvent(viewer, asEvent)) out.push({ ...n, inbox_id: inboxId });
  }
  return out;
}

/** Whether a push of this notification may still go out (see notificationsSeenNow); false once the notification is gone. */
export async function pushStillSeen(ctx: Pick<Ctx, 'db' | 'clock'>, notificationId: string): Promise<boolean> {
  const n = await ctx.db
    .selectFrom('notifications')
    .select(['person_id', 'workspace_id', 'conversation_id', 'channel_id'])
    .where('id', '=', notificationId)
    .executeTakeFirst();
  return !!n && (await notificationsSeenNow(ctx, n.person_id, [n])).length === 1;
}

/** Retention: notifications older than this are removed (their mail lines with them). */
export const NOTIFICATION_KEEP_DAYS = 30;

export async function deleteOldNotifications(ctx: Pick<Ctx, 'db'>, now: Date, batch: number): Promise<number> {
  const before = iso(now.getTime() - NOTIFICATION_KEEP_DAYS * 24 * 60 * MINUTE);
  const result = await ctx.db
    .deleteFrom('notifications')
    .where('id', 'in', (eb) => eb.selectFrom('notifications as n').select('n.id').where('n.created_at', '<', before).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteWorkspaceNotifications(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  const result = await ctx.db
    .deleteFrom('notifications')
    .where('id', 'in', (eb) => eb.selectFrom('notifications as n').select('n.id').where('n.workspace_id', '=', workspaceId).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
