// Recording events the way services do (one transaction, then the announcement), with data shaped
// like the spec's Resources, for tests that do not go through conversations.
import type { App } from '../../src/context.js';
import { announceEvents, type NewEvent, recordEvent } from '../../src/events/service.js';
import { randomText } from '../../src/platform/ids.js';

export function contactData(opts: { id?: string; externalIds?: { inbox_id: string; external_id: string }[] } = {}) {
  return {
    id: opts.id ?? `ct_${randomText(26)}`,
    name: 'Ada Lovelace',
    emails: ['ada@example.com'],
    external_ids: opts.externalIds ?? [],
    attributes: { plan: 'pro' },
    online: false,
  };
}

export function conversationData(inboxId: string, contactId: string) {
  return { id: `cv_${randomText(26)}`, inbox_id: inboxId, contact_id: contactId, status: 'open', subject: 'Hello' };
}

export function messageData(conversationId: string, kind = 'message') {
  return {
    id: `m_${randomText(26)}`,
    conversation_id: conversationId,
    kind,
    direction: 'in',
    author: { type: 'contact' },
    body: 'Hi there',
    attachments: [],
    created_at: new Date().toISOString(),
  };
}

/** Records one event in its own transaction and announces it. */
export async function emit(app: App, event: Omit<NewEvent, 'occurredAt'> & { occurredAt?: Date }) {
  const result = await recordEvent(app, { ...event, occurredAt: event.occurredAt ?? app.clock.now() });
  announceEvents(app);
  return result;
}

/** A message.created event of a new conversation in the inbox. */
export async function emitMessage(app: App, workspaceId: string, inboxId: string, opts: { isNote?: boolean; webhook?: boolean; contactId?: string } = {}) {
  const contact = contactData({ id: opts.contactId });
  const conversation = conversationData(inboxId, contact.id);
  const message = messageData(conversation.id, opts.isNote ? 'note' : 'message');
  const r = await emit(app, {
    workspaceId,
    inboxId,
    contactId: contact.id,
    type: 'message.created',
    isNote: opts.isNote,
    webhook: opts.webhook,
    data: { message, conversation, contact },
  });
  return { ...r, contact, conversation, message };
}
