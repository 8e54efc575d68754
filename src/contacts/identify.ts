// How the party of an incoming message or session becomes a contact: by the address of a mail's
// sender, by the customer backend's external id (proven by the inbox identity secret), or as a new
// contact. An address is only ever matched to an existing contact when it is proven: the sender of a
// mail, an API caller, or an identity hash that covers the address. A widget visitor's unproven
// address is kept on a contact of its own as `unverified_email` (issue 32): it never selects, joins
// or takes over the contact that owns the address.

import type { Tx } from '../conversations/service.js';
import type { Db } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { checkAttributes, checkExternalId, checkName, insertContact, normalizeAddress, recordContactUpdated } from './service.js';
import { type ContactView, contactIdByEmail, contactIdByExternalId, loadContactView, loadContactViewByEmail, loadContactViewsByEmail } from './store.js';

/**
 * The contact that owns the address in the workspace, created when there is none. A contact
 * without a name takes the display name of the mail; `attributes` are merged into the found
 * contact's (its other attributes kept) (contact.updated unless quiet). Only for proven addresses.
 */
export async function findOrCreateContactByEmail(
  tx: Tx,
  input: {
    workspaceId: string;
    email: string;
    name?: string | null;
    attributes?: Record<string, string>;
    quiet?: boolean;
    /** The contact contactsByEmail found for this address in the same transaction (null: none), so it is not looked up again. */
    found?: ContactView | null;
  },
): Promise<{ view: ContactView; created: boolean }> {
  const email = normalizeAddress(input.email);
  const view = input.found !== undefined ? input.found : await loadContactViewByEmail(tx.db, input.workspaceId, email);
  if (view) {
    const id = view.contact.id;
    const set: { name?: string; attributes?: string } = {};
    const name = checkName(input.name);
    if (view.contact.name === null && name) set.name = name;
    if (input.attributes) {
      const current = JSON.parse(view.contact.attributes) as Record<string, unknown>;
      if (Object.entries(input.attributes).some(([k, v]) => current[k] !== v)) set.attributes = checkAttributes({ ...current, ...input.attributes });
    }
    if (set.name !== undefined || set.attributes !== undefined) {
      const now = tx.clock.now();
      await tx.db
        .updateTable('contacts')
        .set({ ...set, updated_at: iso(now) })
        .where('id', '=', id)
        .execute();
      view.contact = { ...view.contact, ...set, updated_at: iso(now) };
      if (!input.quiet) await recordContactUpdated(tx, view, now);
    }
    return { view, created: false };
  }
  return {
    view: await insertContact(tx, { workspaceId: input.workspaceId, name: input.name, emails: [email], attributes: input.attributes }),
    created: true,
  };
}

/** The contacts owning these addresses in the workspace, by normalized address (the keys findOrCreateContactByEmail's `found` is for). */
export async function contactsByEmail(db: Db, workspaceId: string, normalizedEmails: readonly string[]): Promise<Map<string, ContactView>> {
  return loadContactViewsByEmail(db, workspaceId, normalizedEmails);
}

/**
 * A new contact for a party whose address is not proven (an anonymous widget visitor who typed an
 * address, mail whose sender cannot be read, anonymous feedback). The typed address is kept as
 * `unverified_email` only.
 */
export async function createAnonymousContact(
  tx: Tx,
  input: { workspaceId: string; name?: string | null; unverifiedEmail?: string | null; attributes?: Record<string, string> },
): Promise<ContactView> {
  const unverifiedEmail = input.unverifiedEmail ? normalizeAddress(input.unverifiedEmail) : null;
  return insertContact(tx, { workspaceId: input.workspaceId, name: input.name ?? null, unverifiedEmail, attributes: input.attributes });
}

/**
 * The contact the customer backend knows by this id in the inbox, created when there is none.
 * `email` joins the contact that owns it (or is stored as proven on a new one) only when
 * `emailProven`: an API caller, or a widget identity hash that covers the address. An unproven
 * address never selects or joins an existing contact; a new contact keeps it as `unverified_email`.
 */
export async function findOrCreateContactByExternalId(
  tx: Tx,
  input: { workspaceId: string; inboxId: string; externalId: string; name?: string | null; email?: string | null; emailProven: boolean },
): Promise<{ view: ContactView; created: boolean }> {
  const x = checkExternalId({ inbox_id: input.inboxId, external_id: input.externalId });
  const id = await contactIdByExternalId(tx.db, input.workspaceId, x.inbox_id, x.external_id);
  if (id) return { view: (await loadContactView(tx.db, input.workspaceId, id))!, created: false };
  const email = input.email ? normalizeAddress(input.email) : null;
  if (email && input.emailProven) {
    const byEmail = await contactIdByEmail(tx.db, input.workspaceId, email);
    if (byEmail) {
      await tx.db
        .insertInto('contact_external_ids')
        .values({ workspace_id: input.workspaceId, ...x, contact_id: byEmail, created_at: iso(tx.clock.now()) })
        .execute();
      return { view: (await loadContactView(tx.db, input.workspaceId, byEmail))!, created: false };
    }
    return { view: await insertContact(tx, { workspaceId: input.workspaceId, name: input.name, emails: [email], externalIds: [x] }), created: true };
  }
  return { view: await insertContact(tx, { workspaceId: input.workspaceId, name: input.name, externalIds: [x], unverifiedEmail: email }), created: true };
}
