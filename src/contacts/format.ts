// What the API, webhooks and realtime show of a contact. The `online` flag is added by the
// webhook side when it prepares a delivery.
import { z } from '@hono/zod-openapi';
import { CustomFieldValuesSchema } from '../custom-fields/format.js';
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
    unverified_email: contact.unverified_email ?? null,
    created_at: contact.created_at,
    updated_at: contact.updated_at,
  };
}

export const ContactSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    emails: z.array(z.string()),
    external_ids: z.array(z.object({ inbox_id: z.string(), external_id: z.string() })),
    attributes: z.record(z.string(), z.unknown()),
    merged_into_id: z.string().nullable().openapi({ description: 'set when this contact was merged into another' }),
    unverified_email: z.string().nullable().openapi({
      description:
        'an address a chat visitor typed without proof: never used to find the contact or to send mail; add it to emails to confirm it, or merge this contact into the one that owns it',
    }),
    created_at: z.string(),
    updated_at: z.string(),
    custom_fields: CustomFieldValuesSchema.optional().openapi({
      description: 'the values of the workspace’s contact custom fields by key (null when empty); shown by GET, POST, PATCH, the list and events',
    }),
  })
  .openapi('Contact');
