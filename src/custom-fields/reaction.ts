// Custom field values in events (src/events/registry.ts): an event's `conversation` and `contact`
// show their `custom_fields` as they are when the event is recorded, so webhooks, GET /v1/events
// and the realtime stream carry them. The definitions come from the reaction settings cache, so a
// workspace without fields reads nothing more, and one with fields one statement per event.
import type { Reaction } from '../events/reaction-types.js';
import { customFieldsForEvent } from './store.js';

function idOf(value: unknown): string | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}

export const customFieldsReaction: Reaction = {
  name: 'custom_fields',
  async enrich(tx, { data, workspaceId }) {
    const conversationId = idOf(data.conversation);
    const contactId = idOf(data.contact);
    if (!conversationId && !contactId) return data;
    const values = await customFieldsForEvent(tx.db, workspaceId, { conversationId, contactId });
    const out = { ...data };
    if (conversationId) out.conversation = { ...(data.conversation as object), custom_fields: values.conversation };
    if (contactId) out.contact = { ...(data.contact as object), custom_fields: values.contact };
    return out;
  },
};
