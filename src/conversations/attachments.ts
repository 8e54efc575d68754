// Attachments through the API: uploaded to a conversation first (raw body), then sent with a
// message by id; downloaded with their stored type. Uploads never sent are removed after a day.
import type { Readable } from 'node:stream';
import type { Access } from '../auth/access.js';
import { canSeeInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { DAY, HOUR, iso } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import type { JobKind } from '../platform/jobs.js';
import { putUpload, scheduleFileDeletion } from './files.js';
import type { AttachmentRow, ConversationRow } from './format.js';
import { findInboxUploadFor, removeOldInboxUploads } from './inbox-uploads.js';
import { getConversationFor } from './service.js';
import { findMessage } from './store.js';

export const UNSENT_UPLOAD_TTL_MS = DAY;
export const ATTACHMENT_CLEANUP_JOB = 'attachments.cleanup';

export async function uploadAttachment(
  ctx: Ctx,
  access: Access,
  conversationId: string,
  input: { filename?: string; contentType?: string; data: Readable | Buffer },
): Promise<AttachmentRow> {
  return storeUpload(ctx, await getConversationFor(ctx, access, conversationId), input);
}

/** Stores an upload of a conversation the caller was already allowed to write in (a member or a visitor). */
export async function storeUpload(
  ctx: Ctx,
  conversation: Pick<ConversationRow, 'id' | 'workspace_id'>,
  input: { filename?: string; contentType?: string; data: Readable | Buffer; maxBytes?: number },
): Promise<AttachmentRow> {
  const file = await putUpload(ctx, conversation.workspace_id, input);
  const row: AttachmentRow = {
    ...file,
    workspace_id: conversation.workspace_id,
    conversation_id: conversation.id,
    message_id: null,
    content_id: null,
    inline: 0,
    created_at: iso(ctx.clock.now()),
  };
  try {
    await ctx.db.insertInto('attachments').values(row).execute();
  } catch (error) {
    await ctx.storage.delete(file.storage_key).catch(() => undefined);
    throw error;
  }
  return row;
}

export async function getAttachmentFor(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<AttachmentRow> {
  const row = await ctx.db
    .selectFrom('attachments')
    .innerJoin('conversations', 'conversations.id', 'attachments.conversation_id')
    .selectAll('attachments')
    .select('conversations.inbox_id')
    .where('attachments.workspace_id', '=', access.workspaceId)
    .where('attachments.id', '=', id)
    .executeTakeFirst();
  if (!row || !canSeeInbox(access, row.inbox_id)) {
    // An upload for a conversation not started yet (./inbox-uploads.ts).
    const upload = row ? undefined : await findInboxUploadFor(ctx.db, access, id);
    if (upload) return upload;
    throw notFound('attachment');
  }
  const { inbox_id: _inbox, ...attachment } = row;
  return attachment;
}

export async function openAttachment(ctx: Pick<Ctx, 'storage'>, row: AttachmentRow): Promise<Readable> {
  try {
    return await ctx.storage.get(row.storage_key);
  } catch {
    throw notFound('attachment file');
  }
}

/** The original .eml of an inbound message (gone once retention removed it). */
export async function openRawEmail(ctx: Ctx, access: Access, conversationId: string, messageId: string): Promise<{ stream: Readable; size: number }> {
  const conversation = await getConversationFor(ctx, access, conversationId);
  const message = await findMessage(ctx.db, conversation.id, messageId);
  if (!message) throw notFound('message');
  if (!message.raw_storage_key) throw notFound('original e-mail');
  try {
    return { stream: await ctx.storage.get(message.raw_storage_key), size: message.raw_size ?? 0 };
  } catch {
    throw notFound('original e-mail file');
  }
}

/** Hourly: uploads that were never sent with a message are removed a day after upload. */
export function attachmentCleanupJob(ctx: Ctx): JobKind {
  return {
    kind: ATTACHMENT_CLEANUP_JOB,
    everyMs: HOUR,
    async run() {
      const cutoff = iso(ctx.clock.now().getTime() - UNSENT_UPLOAD_TTL_MS);
      for (;;) {
        const rows = await ctx.db
          .selectFrom('attachments')
          .select(['id', 'storage_key'])
          .where('message_id', 'is', null)
          .where('created_at', '<', cutoff)
          .limit(500)
          .execute();
        if (rows.length === 0) break;
        await ctx.db.transaction().execute(async (trx) => {
          // Only rows still unsent are removed (one may have been sent since the select).
          const removed = await trx
            .deleteFrom('attachments')
            .where(
              'id',
              'in',
              rows.map((r) => r.id),
            )
            .where('message_id', 'is', null)
            .returning('storage_key')
            .execute();
          await scheduleFileDeletion(
            { db: trx, clock: ctx.clock },
            removed.map((r) => r.storage_key),
          );
        });
        if (rows.length < 500) break;
      }
      while ((await removeOldInboxUploads(ctx, cutoff, 500)) === 500);
    },
  };
}
