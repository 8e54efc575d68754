// The realtime reaction (src/events/registry.ts): an event about a contact shows whether the
// contact has a live widget or SDK connection at the time it was recorded.
import type { Reaction } from '../events/reaction-types.js';
import { onlineContacts } from './connections.js';

export const contactOnlineReaction: Reaction = {
  name: 'realtime',
  async enrich(tx, { data }) {
    const contact = data.contact;
    if (!contact || typeof contact !== 'object' || Array.isArray(contact)) return data;
    const contactId = (contact as { id?: unknown }).id;
    if (typeof contactId !== 'string') return data;
    const online = (await onlineContacts(tx, [contactId])).has(contactId);
    return { ...data, contact: { ...(contact as object), online } };
  },
};
