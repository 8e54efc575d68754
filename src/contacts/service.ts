// Contacts: the people conversations are with. Found by e-mail address (inbound mail) or by the
// customer backend's external id (per inbox); created, changed, merged and deleted through the API.
//
// Callers limited to some inboxes reach a contact that has a conversation or an external id in one
// of their inboxes; deleting or merging needs every inbox the contact touches to be theirs.

import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { Tx } from '../conversations/service.js';
import { inboxIdsOfContactConversations } from '../conversations/store.js';
import { setCustomFieldValues } from '../custom-fields/values.js';
import { retryOnUniqueViolation } from '../db/retry.js';
import type { Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents, recordEvent } from '../events/service.js';
import { missingInboxIds } from '../inboxes/store.js';
import { iso } from '../platform/clock.js';
import { conflict, forbidden, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { checkFreeJson } from '../platform/json-limits.js';
import { charCount } from '../platform/text.js';
import { normalizeAddress } from './address.js';
import { formatContact } from './format.js';
import { type ContactRow, type ContactView, contactIdByExternalId, type ExternalId, inboxesOfContact, loadContactView, loadContactViews } from './store.js';

export const MAX_EMAILS = 50;
export const MAX_EXTERNAL_IDS = 100;
export const MAX_ATTRIBUTES_BYTES = 32 * 1024;
export const MAX_NAME_LENGTH = 200;

export { normalizeAddress };

export function checkName(name: string | null | undefined): string | null {
  if (name === undefined || name === null) return null;
  const n = name.replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  return n ? n.slice(0, MAX_NAME_LENGTH) : null;
}

export function checkExternalId(x: ExternalId): ExternalId {
  const id = x.external_id.trim();
  if (!id || charCount(id) > 255) throw invalid('external_id must be 1 to 255 characters');
  return { inbox_id: x.inbox_id, external_id: id };
}

export function checkAttributes(attrs: Record<string, unknown>): string {
  checkFreeJson('attributes', attrs, MAX_ATTRIBUTES_BYTES);
  return JSON.stringify(attrs);
}

export interface NewContact {
  workspaceId: string;
  name?: string | null;
  emails?: string[];
  externalIds?: ExternalId[];
  attributes?: Record<string, unknown>;
  unverifiedEmail?: string | null;
  createdAt?: Date;
}

/** The rows insertContact writes, not yet written (a migration's batch writes many at once: insertContactRows). */
export function newContactRows(clock: Tx['clock'], input: NewContact): ContactView {
  const at = input.createdAt ?? clock.now();
  const contact: ContactRow = {
    id: newId('ct', at.getTime()),
    workspace_id: input.workspaceId,
    name: checkName(input.name),
    attributes: checkAttributes(input.attributes ?? {}),
    merged_into_id: null,
    unverified_email: input.unverifiedEmail ?? null,
    created_at: iso(at),
    updated_at: iso(at),
  };
  return { contact, emails: input.emails ?? [], externalIds: input.externalIds ?? [] };
}

/** Contacts made by newContactRows, with their addresses and external ids, a few multi-row inserts. */
export async function insertContactRows(db: Tx['db'], views: readonly ContactView[]): Promise<void> {
  const emails = views.flatMap(({ contact, emails }) =>
    emails.map((email, position) => ({ workspace_id: contact.workspace_id, email, contact_id: contact.id, position, created_at: contact.created_at })),
  );
  const externalIds = views.flatMap(({ contact, externalIds }) =>
    externalIds.map((x) => ({
      workspace_id: contact.workspace_id,
      inbox_id: x.inbox_id,
      external_id: x.external_id,
      contact_id: contact.id,
      created_at: contact.created_at,
    })),
  );
  for (let i = 0; i < views.length; i += CONTACT_INSERT_CHUNK) {
    await db
      .insertInto('contacts')
      .values(views.slice(i, i + CONTACT_INSERT_CHUNK).map((v) => v.contact))
      .execute();
  }
  for (let i = 0; i < emails.length; i += CONTACT_INSERT_CHUNK) {
    await db
      .insertInto('contact_emails')
      .values(emails.slice(i, i + CONTACT_INSERT_CHUNK))
      .execute();
  }
  for (let i = 0; i < externalIds.length; i += CONTACT_INSERT_CHUNK) {
    await db
      .insertInto('contact_external_ids')
      .values(externalIds.slice(i, i + CONTACT_INSERT_CHUNK))
      .execute();
  }
}

const CONTACT_INSERT_CHUNK = 100;

export async function insertContact(tx: Tx, input: NewContact): Promise<ContactView> {
  const view = newContactRows(tx.clock, input);
  await insertContactRows(tx.db, [view]);
  return view;
}

/** Inboxes where the contact has conversations: inbox-limited webhook endpoints get its events. */
export async function conversationInboxes(db: Db, contactId: string): Promise<string[]> {
  return inboxIdsOfContactConversations(db, contactId);
}

export async function recordContactUpdated(tx: Tx, view: ContactView, at: Date) {
  await recordEvent(tx, {
    workspaceId: view.contact.workspace_id,
    contactId: view.contact.id,
    relatedInboxIds: await conversationInboxes(tx.db, view.contact.id),
    type: 'contact.updated',
    occurredAt: at,
    data: { contact: formatContact(view) },
  });
}

// ---- reach of inbox-limited callers ----

async function touchedInboxes(db: Db, contactId: string): Promise<Set<string>> {
  return inboxesOfContact(db, contactId);
}

export async function requireReach(db: Db, access: Access, view: ContactView, mode: 'some' | 'all'): Promise<void> {
  if (access.inboxIds === null) return;
  const reach = access.inboxIds;
  const touched = [...(await touchedInboxes(db, view.contact.id))];
  const ok = mode === 'some' ? touched.some((i) => reach.includes(i)) : touched.length > 0 && touched.every((i) => reach.includes(i));
  if (!ok) {
    if (mode === 'all' && touched.some((i) => reach.includes(i)))
      throw forbidden('this contact has conversations or external ids in inboxes your key does not reach');
    throw notFound('contact');
  }
}

async function checkInboxes(db: Db, access: Access, externalIds: readonly ExternalId[]): Promise<void> {
  const ids = [...new Set(externalIds.map((x) => x.inbox_id))];
  if (!ids.length) return;
  const missing = await missingInboxIds(db, access.workspaceId, ids, { live: true });
  for (const id of ids) {
    if (missing.includes(id) || (access.inboxIds !== null && !access.inboxIds.includes(id))) throw notFound(`inbox ${id}`);
  }
}

function checkEmails(emails: readonly string[]): string[] {
  const out = [...new Set(emails.map(normalizeAddress))];
  if (out.length > MAX_EMAILS) throw invalid(`at most ${MAX_EMAILS} addresses`);
  return out;
}

function checkExternalIds(list: readonly ExternalId[]): ExternalId[] {
  if (list.length > MAX_EXTERNAL_IDS) throw invalid(`at most ${MAX_EXTERNAL_IDS} external ids`);
  const out = list.map(checkExternalId);
  const keys = new Set(out.map((x) => `${x.inbox_id}\n${x.external_id}`));
  if (keys.size !== out.length) throw invalid('external_ids lists the same id twice');
  return out;
}

async function refuseTakenEmails(db: Db, workspaceId: string, emails: readonly string[], self?: string) {
  if (!emails.length) return;
  const taken = await db
    .selectFrom('contact_emails')
    .select(['email', 'contact_id'])
    .where('workspace_id', '=', workspaceId)
    .where('email', 'in', emails)
    .execute();
  const other = taken.find((t) => t.contact_id !== self);
  if (other) throw conflict(`the address ${other.email} belongs to contact ${other.contact_id}`);
}

async function refuseTakenExternalIds(db: Db, workspaceId: string, list: readonly ExternalId[], self?: string) {
  for (const x of list) {
    const owner = await contactIdByExternalId(db, workspaceId, x.inbox_id, x.external_id);
    if (owner && owner !== self) throw conflict(`external id ${JSON.stringify(x.external_id)} of inbox ${x.inbox_id} belongs to contact ${owner}`);
  }
}

// ---- API operations ----

export interface ContactInput {
  name?: string | null;
  emails?: string[];
  externalIds?: ExternalId[];
  attributes?: Record<string, unknown>;
  customFields?: Record<string, unknown>;
}

export async function createContact(ctx: Ctx, access: Access, input: ContactInput): Promise<ContactView> {
  const emails = checkEmails(input.emails ?? []);
  const externalIds = checkExternalIds(input.externalIds ?? []);
  return retryOnUniqueViolation(() =>
    inTransaction(ctx.db, async (trx) => {
      await checkInboxes(trx, access, externalIds);
      await refuseTakenEmails(trx, access.workspaceId, emails);
      await refuseTakenExternalIds(trx, access.workspaceId, externalIds);
      const view = await insertContact(
        { db: trx, clock: ctx.clock },
        { workspaceId: access.workspaceId, name: input.name, emails, externalIds, attributes: input.attributes },
      );
      if (input.customFields)
        await setCustomFieldValues(trx, { workspaceId: access.workspaceId, object: 'contact', ownerId: view.contact.id, values: input.customFields });
      return view;
    }),
  );
}

export async function getContactFor(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<ContactView> {
  const view = await loadContactView(ctx.db, access.workspaceId, id);
  if (!view) throw notFound('contact');
  // A merged contact is reached through the contact it was merged into.
  await requireReach(
    ctx.db,
    access,
    view.contact.merged_into_id ? ((await loadContactView(ctx.db, access.workspaceId, view.contact.merged_into_id)) ?? view) : view,
    'some',
  );
  return view;
}

export async function getContactByExternalIdFor(ctx: Pick<Ctx, 'db'>, access: Access, inboxId: string, externalId: string): Promise<ContactView> {
  if (access.inboxIds !== null && !access.inboxIds.includes(inboxId)) throw notFound('contact');
  const id = await contactIdByExternalId(ctx.db, access.workspaceId, inboxId, externalId.trim());
  if (!id) throw notFound('contact');
  return (await loadContactView(ctx.db, access.workspaceId, id))!;
}

export interface ContactPatch {
  name?: string | null;
  emails?: string[];
  externalIds?: ExternalId[];
  /** Merged into the current attributes; a null value removes the key. */
  attributes?: Record<string, unknown>;
  /** Custom field values by key (checked by type; null clears); keys not named stay. */
  customFields?: Record<string, unknown>;
}

export async function updateContact(ctx: Ctx, access: Access, id: string, patch: ContactPatch): Promise<ContactView> {
  const emails = patch.emails ? checkEmails(patch.emails) : undefined;
  const requested = patch.externalIds ? checkExternalIds(patch.externalIds) : undefined;
  const result = await retryOnUniqueViolation(() =>
    inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      const view = await loadContactView(trx, access.workspaceId, id);
      if (!view) throw notFound('contact');
      if (view.contact.merged_into_id) throw conflict(`contact ${id} was merged into ${view.contact.merged_into_id}; change that one`);
      await requireReach(trx, access, view, 'some');
      const now = ctx.clock.now();
      const set: Partial<ContactRow> = {};
      if (patch.name !== undefined) {
        const name = checkName(patch.name);
        if (name !== view.contact.name) set.name = name;
      }
      if (patch.attributes !== undefined) {
        const merged: Record<string, unknown> = { ...JSON.parse(view.contact.attributes) };
        for (const [k, v] of Object.entries(patch.attributes)) {
          if (v === null) delete merged[k];
          else merged[k] = v;
        }
        const text = checkAttributes(merged);
        if (text !== view.contact.attributes) set.attributes = text;
      }
      // Confirming a visitor's typed address: it is now a proven one.
      if (emails && view.contact.unverified_email && emails.includes(view.contact.unverified_email)) set.unverified_email = null;
      let changed = Object.keys(set).length > 0;
      if (emails && emails.join('\n') !== view.emails.join('\n')) {
        await refuseTakenEmails(trx, access.workspaceId, emails, id);
        await trx.deleteFrom('contact_emails').where('contact_id', '=', id).execute();
        if (emails.length) {
          await trx
            .insertInto('contact_emails')
            .values(emails.map((email, position) => ({ workspace_id: access.workspaceId, email, contact_id: id, position, created_at: iso(now) })))
            .execute();
        }
        changed = true;
      }
      if (requested) {
        await checkInboxes(trx, access, requested);
        // A limited key replaces only the ids of its own inboxes; the others stay.
        const kept = access.inboxIds === null ? [] : view.externalIds.filter((x) => !access.inboxIds!.includes(x.inbox_id));
        const next = [...kept, ...requested];
        const key = (l: ExternalId[]) =>
          l
            .map((x) => `${x.inbox_id}\n${x.external_id}`)
            .sort()
            .join('\n');
        if (key(next) !== key(view.externalIds)) {
          await refuseTakenExternalIds(trx, access.workspaceId, requested, id);
          await trx.deleteFrom('contact_external_ids').where('contact_id', '=', id).execute();
          if (next.length) {
            await trx
              .insertInto('contact_external_ids')
              .values(
                next.map((x) => ({ workspace_id: access.workspaceId, inbox_id: x.inbox_id, external_id: x.external_id, contact_id: id, created_at: iso(now) })),
              )
              .execute();
          }
          changed = true;
        }
      }
      if (patch.customFields !== undefined) {
        const written = await setCustomFieldValues(trx, { workspaceId: access.workspaceId, object: 'contact', ownerId: id, values: patch.customFields });
        if (Object.keys(written).length) changed = true;
      }
      if (!changed) return { view, changed };
      set.updated_at = iso(now);
      await trx.updateTable('contacts').set(set).where('id', '=', id).execute();
      const updated = (await loadContactView(trx, access.workspaceId, id))!;
      await recordContactUpdated(tx, updated, now);
      return { view: updated, changed };
    }),
  );
  if (result.changed) announceEvents(ctx);
  return result.view;
}

/**
 * A deleted inbox's part of its contacts: at most `batch` of the external ids it held are removed,
 * with one contact.updated per contact changed (the contacts themselves stay in the workspace).
 * Returns how many ids were removed.
 */
export async function removeInboxExternalIds(
  ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>,
  scope: { workspaceId: string; inboxId: string },
  batch: number,
): Promise<number> {
  const rows = await ctx.db
    .selectFrom('contact_external_ids')
    .select(['contact_id', 'external_id'])
    .where('inbox_id', '=', scope.inboxId)
    .limit(batch)
    .execute();
  if (rows.length === 0) return 0;
  const now = ctx.clock.now();
  const removed = await inTransaction(ctx.db, async (trx) => {
    let n = 0;
    for (let i = 0; i < rows.length; i += 500) {
      const r = await trx
        .deleteFrom('contact_external_ids')
        .where('inbox_id', '=', scope.inboxId)
        .where(
          'external_id',
          'in',
          rows.slice(i, i + 500).map((x) => x.external_id),
        )
        .executeTakeFirst();
      n += Number(r.numDeletedRows);
    }
    const contactIds = [...new Set(rows.map((r) => r.contact_id))];
    const views = await loadContactViews(trx, contactIds);
    for (const id of contactIds) {
      const view = views.get(id);
      if (view && view.contact.workspace_id === scope.workspaceId) await recordContactUpdated({ db: trx, clock: ctx.clock }, view, now);
    }
    return n;
  });
  announceEvents(ctx);
  return removed;
}
