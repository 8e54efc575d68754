// What the API, webhooks and realtime show of a contact. The `online` flag is added by the
// webhook side when it prepares a delivery.
import type { ContactView } from './store.js';

export function formatContact(view: ContactView, opts: { inboxIds?: readonly string[] | null } = {}) {
  const { contact } = view;
  const reach = opts.inboxIds ?? null;
  return {
    id: contact.id,
    name: contact.name,
    emails: view.emails,
    external_ids: reach === null ? view.externalIds : view.externalIds.filter((x) => reach.includes(x.inbox_id)),
    attributes: JSON.parse(contact.attributes) as Record<string, unknown>,
    merged_into_id: contact.merged_into_id,
    created_at: contact.created_at,
    updated_at: contact.updated_at,
  };
}

export type FormattedContact = ReturnType<typeof formatContact>;
