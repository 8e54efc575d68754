// The notifications reaction (src/events/registry.ts): an event that may notify members stores a
// `notifications.event` job in the event's transaction. The job (./service.ts) finds who is told
// and stores the deliveries. What is never notified is left out here already: spam, imported
// conversations, internal events; imported history records no events at all (quiet).
import type { Reaction, RecordedEvent } from '../events/reaction-types.js';
import { enqueue } from '../platform/jobs.js';

export const NOTIFY_EVENT_JOB = 'notifications.event';

export interface NotifyEventPayload {
  event_id: string;
  /** The member who acted (never notified of their own action). */
  actor: string | null;
  /** conversation.updated: the member the conversation was just assigned to. */
  assigned_to?: string;
  /** conversation.updated: a snoozed conversation woke (its assignee is told). */
  woke?: boolean;
}

/** The reasons a snoozed conversation wakes by itself (src/conversations/snooze.ts). */
const WAKE_REASONS = new Set(['snooze_ended', 'customer_reply']);

type Shown = { kind?: string; direction?: string; body?: string; details?: { held?: string } | null };
type ShownConversation = { spam?: boolean; imported?: boolean; assignee_id?: string | null };

/** What about this event could notify someone, or undefined when nothing can. */
function notifiable(event: RecordedEvent): Omit<NotifyEventPayload, 'event_id' | 'actor'> | undefined {
  // A mailbox reader found the channel's sign-in refused (src/mail-accounts/revoked.ts): the managers.
  if (event.type === 'channel.sign_in_required') return {};
  const conversation = event.data.conversation as ShownConversation | undefined;
  if (!conversation || conversation.spam) return undefined;
  switch (event.type) {
    case 'conversation.created':
      return conversation.imported ? undefined : {};
    case 'conversation.updated': {
      const to = event.cause.changes?.assignee_id?.to;
      if (typeof to === 'string') return { assigned_to: to };
      const woke = event.cause.changes?.snoozed_until && event.cause.changes.snoozed_until.to === null && WAKE_REASONS.has(event.cause.reason ?? '');
      return woke && conversation.assignee_id ? { woke: true } : undefined;
    }
    case 'conversation.automation_notice':
      // An automation rule's notify_members action (src/automation): the members it names.
      return {};
    case 'conversation.sign_in_required':
      // A channel's sign-in was refused while sending a reply (src/mail-accounts/revoked.ts): the managers.
      return {};
    case 'conversation.sla':
      // An SLA warning or breach (src/sla/service.ts): the assignee, or the inbox's members.
      return {};
    case 'message.created': {
      const message = event.data.message as Shown | undefined;
      if (message?.kind === 'message' && message.direction === 'in' && conversation.assignee_id) return {};
      if (message?.kind === 'note' && (message.body?.includes('@') || message.details?.held)) return {};
      return undefined;
    }
    default:
      return undefined;
  }
}

export const notificationsReaction: Reaction = {
  name: 'notifications',
  async onEvent(tx, event) {
    if (event.personId || event.audience !== 'all') return;
    const what = notifiable(event);
    if (!what) return;
    const payload: NotifyEventPayload = { event_id: event.id, actor: event.cause.personId ?? null, ...what };
    await enqueue(tx.db, tx.clock, { kind: NOTIFY_EVENT_JOB, payload, uniqueKey: `${NOTIFY_EVENT_JOB}:${event.id}` });
  },
};
