import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { applyConversationChanges } from '../conversations/changes.js';
import { deleteConversationsWithFiles } from '../conversations/files.js';
import { authorFromAccess } from '../conversations/service.js';
import { conversationsOfContact } from '../conversations/store.js';
import { deleteCustomFieldValuesOf } from '../custom-fields/store.js';
import { mergeCustomFieldValues } from '../custom-fields/values.js';
import type { Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents, recordEvent } from '../events/service.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { formatContact } from './format.js';
import { checkAttributes, getContactByExternalIdFor, recordContactUpdated, requireReach } from './service.js';
import { type ContactView, loadContactView, loadContactViews } from './store.js';

/**
 * Merges `sourceId` into `targetId`: the target gets the source's addresses, external ids and
 * conversations (conversation.updated each); attributes and name fill gaps of the target. The
 * source stays as a record with merged_into_id (contact.deleted with the external ids it had).
 */
export async function mergeContact(ctx: Ctx, access: Access, sourceId: string, targetId: string): Promise<ContactView> {
  if (sourceId === targetId) throw invalid('a contact cannot be merged into itself');
  const merged = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const views = await loadContactViews(trx, [sourceId, targetId]);
    const source = views.get(sourceId);
    const target = views.get(targetId);
    if (!source || source.contact.workspace_id !== access.workspaceId) throw notFound('contact');
    if (!target || target.contact.workspace_id !== access.workspaceId) throw notFound(`contact ${targetId}`);
    for (const v of [source, target]) {
      if (v.contact.merged_into_id) throw conflict(`contact ${v.contact.id} was merged into ${v.contact.merged_into_id} already`);
    }
    await requireReach(trx, access, source, 'all');
    await requireReach(trx, access, target, 'some');
    const now = ctx.clock.now();
    const author = authorFromAccess(access);

    const conversations = await conversationsOfContact(trx, sourceId);
    const sourceInboxes = [...new Set(conversations.map((c) => c.inbox_id))];
    for (const conversation of conversations) {
      await applyConversationChanges(tx, { conversation, patch: { contactId: targetId }, author, reason: 'contact_merged' });
    }
    const offset = target.emails.length;
    await trx
      .updateTable('contact_emails')
      .set((eb) => ({ contact_id: targetId, position: eb('position', '+', offset) }))
      .where('contact_id', '=', sourceId)
      .execute();
    await trx.updateTable('contact_external_ids').set({ contact_id: targetId }).where('contact_id', '=', sourceId).execute();
    await mergeCustomFieldValues(trx, sourceId, targetId);
    await trx.updateTable('contacts').set({ merged_into_id: targetId }).where('merged_into_id', '=', sourceId).execute();
    await trx
      .updateTable('contacts')
      .set({ merged_into_id: targetId, updated_at: iso(now) })
      .where('id', '=', sourceId)
      .execute();
    const attributes = { ...JSON.parse(source.contact.attributes), ...JSON.parse(target.contact.attributes) };
    await trx
      .updateTable('contacts')
      .set({ name: target.contact.name ?? source.contact.name, attributes: checkAttributes(attributes), updated_at: iso(now) })
      .where('id', '=', targetId)
      .execute();

    const after = (await loadContactView(trx, access.workspaceId, targetId))!;
    await recordEvent(tx, {
      workspaceId: access.workspaceId,
      contactId: sourceId,
      relatedInboxIds: sourceInboxes,
      type: 'contact.deleted',
      occurredAt: now,
      data: { contact: formatContact({ ...source, contact: { ...source.contact, merged_into_id: targetId, updated_at: iso(now) } }) },
    });
    await recordContactUpdated(tx, after, now);
    return after;
  });
  announceEvents(ctx);
  return merged;
}

async function deleteContactInTx(ctx: Ctx, trx: Db, access: Access, view: ContactView) {
  const tx = { db: trx, clock: ctx.clock };
  await requireReach(trx, access, view, 'all');
  const now = ctx.clock.now();
  const conversations = await conversationsOfContact(trx, view.contact.id);
  const ids = conversations.map((r) => r.id);
  const removed = await deleteConversationsWithFiles(tx, ids);
  // Records of contacts merged into this one go with it.
  await trx.deleteFrom('contacts').where('merged_into_id', '=', view.contact.id).execute();
  await trx.deleteFrom('contact_emails').where('contact_id', '=', view.contact.id).execute();
  await trx.deleteFrom('contact_external_ids').where('contact_id', '=', view.contact.id).execute();
  await trx.deleteFrom('contacts').where('id', '=', view.contact.id).execute();
  await recordEvent(tx, {
    workspaceId: view.contact.workspace_id,
    contactId: view.contact.id,
    relatedInboxIds: [...new Set(conversations.map((c) => c.inbox_id))],
    type: 'contact.deleted',
    occurredAt: now,
    data: { contact: formatContact(view) },
  });
  // After the event, which shows the values the contact had.
  await deleteCustomFieldValuesOf(trx, [view.contact.id]);
  return removed;
}

/** Deletes a contact with its conversations, messages, attachments and raw e-mails (files by job). */
export async function deleteContact(ctx: Ctx, access: Access, id: string) {
  const removed = await inTransaction(ctx.db, async (trx) => {
    const view = await loadContactView(trx, access.workspaceId, id);
    if (!view) throw notFound('contact');
    if (view.contact.merged_into_id) {
      // Only the record of a merge is left; removing it deletes nothing else.
      await requireReach(trx, access, (await loadContactView(trx, access.workspaceId, view.contact.merged_into_id)) ?? view, 'some');
      await trx.deleteFrom('contacts').where('id', '=', id).execute();
      await deleteCustomFieldValuesOf(trx, [id]);
      return { conversations: 0, files: 0 };
    }
    return deleteContactInTx(ctx, trx, access, view);
  });
  announceEvents(ctx);
  ctx.jobs.wake();
  return removed;
}

/** DELETE /v1/contacts/by-external-id: the contact the backend knows by (inbox_id, external_id). */
export async function deleteContactByExternalId(ctx: Ctx, access: Access, inboxId: string, externalId: string) {
  const removed = await inTransaction(ctx.db, async (trx) => {
    const view = await getContactByExternalIdFor({ db: trx }, access, inboxId, externalId);
    return { id: view.contact.id, ...(await deleteContactInTx(ctx, trx, access, view)) };
  });
  announceEvents(ctx);
  ctx.jobs.wake();
  return removed;
}
