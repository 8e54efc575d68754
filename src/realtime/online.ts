// The realtime reaction (src/events/registry.ts): an event about a contact shows whether the
// contact has a live widget or SDK connection at the time it was recorded.
import type { Reaction } from '../events/reaction-types.js';
import { onlineContacts } from './connections.js';

/**
 * Per recording transaction, the contacts already looked up: a new mail records conversation.created
 * and message.created about one contact, and a group-committed batch holds many mails. Both answers
 * are of one moment (on SQLite the transaction holds the write lock, so no connection opens or closes
 * in between; elsewhere a connection made meanwhile is as concurrent as it was before).
 */
const seenInTransaction = new WeakMap<object, Map<string, boolean>>();

export const contactOnlineReaction: Reaction = {
  name: 'realtime',
  async enrich(tx, { data }) {
    const contact = data.contact;
    if (!contact || typeof contact !== 'object' || Array.isArray(contact)) return data;
    const contactId = (contact as { id?: unknown }).id;
    if (typeof contactId !== 'string') return data;
    let seen = tx.db.isTransaction ? seenInTransaction.get(tx.db) : undefined;
    let online = seen?.get(contactId);
    if (online === undefined) {
      online = (await onlineContacts(tx, [contactId])).has(contactId);
      if (tx.db.isTransaction) {
        if (!seen) seenInTransaction.set(tx.db, (seen = new Map()));
        seen.set(contactId, online);
      }
    }
    return { ...data, contact: { ...(contact as object), online } };
  },
};
