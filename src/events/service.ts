// The stored event stream. Services call recordEvent inside the same transaction as the change
// that causes the event; webhooks, GET /v1/events and the realtime socket all read this table.
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';

/** Event types delivered to webhooks (the spec's table). */
export const WEBHOOK_EVENT_TYPES = [
  'conversation.created',
  'conversation.updated',
  'message.created',
  'feedback.created',
  'contact.updated',
  'contact.deleted',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Realtime-only kinds for owners and admins; never sent to webhooks. */
export type AdminEventType = 'migration.updated' | 'migration.progress' | 'migration.forwarding_confirmation';

export interface NewEvent {
  workspaceId: string;
  /** Absent for contact events. */
  inboxId?: string | null;
  /** The contact an event concerns (inbox-limited webhooks use it for contact events). */
  contactId?: string | null;
  type: WebhookEventType | AdminEventType | (string & {});
  /** When the change happened (not when it is sent). */
  occurredAt: Date;
  data: Record<string, unknown>;
  /** message.created for a note: delivered only to endpoints with include_notes. */
  isNote?: boolean;
}

export async function recordEvent(ctx: { db: Db; clock: Ctx['clock'] }, event: NewEvent): Promise<{ id: string }> {
  const admin = event.type.startsWith('migration.');
  const id = newId('evt', ctx.clock.now().getTime());
  await ctx.db
    .insertInto('events')
    .values({
      id,
      workspace_id: event.workspaceId,
      inbox_id: event.inboxId ?? null,
      contact_id: event.contactId ?? null,
      type: event.type,
      occurred_at: iso(event.occurredAt),
      data: JSON.stringify(event.data),
      audience: admin ? 'admins' : 'all',
      webhook: admin ? 0 : 1,
      is_note: event.isNote ? 1 : 0,
    })
    .execute();
  return { id };
}

/** Call after the transaction that recorded events commits, so that listeners look at once. */
export function announceEvents(ctx: Pick<Ctx, 'hub'>): void {
  ctx.hub.emit('events');
}

/** The delivery payload shape of the spec: type, timestamp, workspace_id, inbox_id (absent for contact events), data. */
export function eventPayload(row: { type: string; occurred_at: string; workspace_id: string; inbox_id: string | null; data: string }) {
  const payload: Record<string, unknown> = { type: row.type, timestamp: row.occurred_at, workspace_id: row.workspace_id };
  if (row.inbox_id !== null && !row.type.startsWith('contact.')) payload.inbox_id = row.inbox_id;
  payload.data = JSON.parse(row.data);
  return payload;
}
