// Feedback from an app or the customer's backend (POST /v1/feedback): a conversation of its own in
// an inbox, with the feedback as its first message. Records conversation.created, message.created
// and feedback.created.

import type { Access } from '../auth/access.js';
import { canSeeInbox } from '../auth/access.js';
import { formatContact } from '../contacts/format.js';
import { createAnonymousContact, findOrCreateContactByEmail, findOrCreateContactByExternalId } from '../contacts/identify.js';
import { type ContactView, loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { formatConversation, formatMessage } from '../conversations/format.js';
import { startConversation, type Tx } from '../conversations/service.js';
import { retryOnUniqueViolation } from '../db/retry.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { findLiveInbox } from '../inboxes/store.js';
import { invalid, notFound } from '../platform/errors.js';
import { checkFreeJson } from '../platform/json-limits.js';
import { charCount } from '../platform/text.js';

export const MAX_FEEDBACK_CHARS = 20_000;
export const MAX_METADATA_BYTES = 16 * 1024;

export interface NewFeedback {
  inboxId: string;
  contact?: { id?: string; email?: string; externalId?: string; name?: string };
  subject?: string;
  body: string;
  metadata?: Record<string, unknown>;
}

async function feedbackContact(tx: Tx, workspaceId: string, input: NewFeedback): Promise<ContactView> {
  const c = input.contact ?? {};
  if (c.id) {
    let view = await loadContactView(tx.db, workspaceId, c.id);
    if (view?.contact.merged_into_id) view = await loadContactView(tx.db, workspaceId, view.contact.merged_into_id);
    if (!view) throw notFound(`contact ${c.id}`);
    return view;
  }
  if (c.externalId)
    return (
      await findOrCreateContactByExternalId(tx, {
        workspaceId,
        inboxId: input.inboxId,
        externalId: c.externalId,
        name: c.name,
        email: c.email,
        emailProven: true,
      })
    ).view;
  if (c.email) return (await findOrCreateContactByEmail(tx, { workspaceId, email: c.email, name: c.name })).view;
  return createAnonymousContact(tx, { workspaceId, name: c.name ?? null });
}

export async function createFeedback(ctx: Ctx, access: Access, input: NewFeedback) {
  if (!input.body.trim()) throw invalid('body must not be empty');
  if (charCount(input.body) > MAX_FEEDBACK_CHARS) throw invalid(`body must be at most ${MAX_FEEDBACK_CHARS} characters`);
  if (input.metadata) checkFreeJson('metadata', input.metadata, MAX_METADATA_BYTES);
  if (!canSeeInbox(access, input.inboxId)) throw notFound(`inbox ${input.inboxId}`);
  const result = await retryOnUniqueViolation(() =>
    inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      const inbox = await findLiveInbox(trx, access.workspaceId, input.inboxId);
      if (!inbox) throw notFound(`inbox ${input.inboxId}`);
      const contact = await feedbackContact(tx, access.workspaceId, input);
      const started = await startConversation(tx, {
        conversation: {
          workspaceId: access.workspaceId,
          inboxId: inbox.id,
          contactId: contact.contact.id,
          source: 'feedback',
          subject: input.subject?.trim() || null,
        },
        contact,
        message: {
          kind: 'message',
          direction: 'in',
          author: { type: 'contact', contactId: contact.contact.id },
          body: input.body,
          subject: input.subject?.trim() || null,
          details: { feedback: true, ...(input.metadata ? { metadata: input.metadata } : {}) },
        },
        feedback: true,
      });
      return { ...started, contact };
    }),
  );
  announceEvents(ctx);
  return {
    conversation: formatConversation(result.conversation, result.labels),
    message: formatMessage(result.message, result.attachments),
    contact: formatContact(result.contact, { inboxIds: access.inboxIds }),
  };
}
