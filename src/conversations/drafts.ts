// Drafts stored on the server (issue 34): one per member and conversation, saved as the member types
// (the panel debounces), restored on any device, removed when the reply or note is sent. Teammates
// see who has one (never its text) so they do not start a second answer.
import { z } from '@hono/zod-openapi';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { sanitizeMailHtml } from '../mail/sanitize.js';
import { iso } from '../platform/clock.js';
import { forbidden, invalid } from '../platform/errors.js';
import { getConversationFor } from './service.js';

type C = Pick<Ctx, 'db' | 'clock'>;

export const DraftSchema = z
  .object({
    kind: z.enum(['message', 'note']),
    html: z.string().openapi({ description: 'sanitized; "" when only files are kept' }),
    attachment_ids: z.array(z.string()),
    updated_at: z.string(),
  })
  .openapi('Draft');

export const DraftsSchema = z
  .object({
    draft: DraftSchema.nullable().openapi({ description: 'the caller’s own draft, null when none' }),
    teammates: z
      .array(z.object({ member_id: z.string(), kind: z.enum(['message', 'note']), updated_at: z.string() }))
      .openapi({ description: 'other members with a draft here (never its text), newest first' }),
  })
  .openapi('ConversationDrafts');

function personOf(access: Access): string {
  if (access.actor.kind !== 'member') throw forbidden('drafts belong to members; API keys have none');
  return access.actor.personId;
}

async function answer(db: Db, conversationId: string, personId: string): Promise<z.infer<typeof DraftsSchema>> {
  const rows = await db.selectFrom('drafts').selectAll().where('conversation_id', '=', conversationId).orderBy('updated_at', 'desc').execute();
  const mine = rows.find((r) => r.person_id === personId);
  return {
    draft: mine ? { kind: mine.kind, html: mine.html, attachment_ids: JSON.parse(mine.attachment_ids) as string[], updated_at: mine.updated_at } : null,
    teammates: rows.filter((r) => r.person_id !== personId).map((r) => ({ member_id: r.person_id, kind: r.kind, updated_at: r.updated_at })),
  };
}

export async function getDrafts(ctx: C, access: Access, conversationId: string) {
  const personId = personOf(access);
  const conversation = await getConversationFor(ctx, access, conversationId);
  return answer(ctx.db, conversation.id, personId);
}

/** Stores the caller's draft; one with no text and no files is removed instead. */
export async function putDraft(ctx: C, access: Access, conversationId: string, input: { kind: 'message' | 'note'; html: string; attachmentIds: string[] }) {
  const personId = personOf(access);
  const conversation = await getConversationFor(ctx, access, conversationId);
  const html = sanitizeMailHtml(input.html) ?? '';
  const empty = !html.replace(/<(?!img\s)[^>]*>/gi, '').trim();
  const ids = [...new Set(input.attachmentIds)];
  if (ids.length) {
    const found = await ctx.db
      .selectFrom('attachments')
      .select('id')
      .where('id', 'in', ids)
      .where('conversation_id', '=', conversation.id)
      .where('message_id', 'is', null)
      .execute();
    const missing = ids.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw invalid(`attachment_ids ${missing.join(', ')} are not unsent uploads of this conversation`);
  }
  if (empty && !ids.length) {
    await removeDraft(ctx.db, conversation.id, personId);
    return answer(ctx.db, conversation.id, personId);
  }
  const now = iso(ctx.clock.now());
  const values = { kind: input.kind, html: empty ? '' : html, attachment_ids: JSON.stringify(ids), updated_at: now };
  await ctx.db
    .insertInto('drafts')
    .values({ conversation_id: conversation.id, person_id: personId, workspace_id: conversation.workspace_id, ...values })
    .onConflict((oc) => oc.columns(['conversation_id', 'person_id']).doUpdateSet(values))
    .execute();
  return answer(ctx.db, conversation.id, personId);
}

export async function deleteDraft(ctx: C, access: Access, conversationId: string) {
  const personId = personOf(access);
  const conversation = await getConversationFor(ctx, access, conversationId);
  await removeDraft(ctx.db, conversation.id, personId);
}

/** Also called when the member's reply or note is stored (in its transaction). */
export async function removeDraft(db: Db, conversationId: string, personId: string): Promise<void> {
  await db.deleteFrom('drafts').where('conversation_id', '=', conversationId).where('person_id', '=', personId).execute();
}
