// Files for a conversation the team has not started yet (issue 33): `POST /v1/inboxes/{id}/attachments`
// stores the file as an upload of the inbox, with the same limits as a reply's upload; `POST
// /v1/conversations` names it in `attachment_ids`, and the new conversation takes it in its own
// transaction (an attachment row with the same id and storage key: the file never moves). A held
// first message that is cancelled gives its files back here (./send-later.ts). Unsent uploads are
// removed a day after upload, with the conversations' own (./attachments.ts).
import type { Readable } from 'node:stream';
import type { Access } from '../auth/access.js';
import { canSeeInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { findLiveInbox } from '../inboxes/store.js';
import { iso } from '../platform/clock.js';
import { invalid, notFound } from '../platform/errors.js';
import type { WorkspaceDataStep } from '../platform/lifecycle.js';
import { putUpload, scheduleFileDeletion } from './files.js';
import { type AttachmentRow, inlineUploads } from './format.js';
import type { StoredAttachment, Tx } from './service.js';

type InboxUpload = { id: string; workspace_id: string; inbox_id: string } & Pick<
  AttachmentRow,
  'filename' | 'content_type' | 'size' | 'sha256' | 'storage_key' | 'created_at'
>;

/** As an attachment (what the API shows of an upload): not sent, so no message and nothing inline yet. */
export const asAttachment = (u: InboxUpload, conversationId = ''): AttachmentRow => ({
  ...u,
  conversation_id: conversationId,
  message_id: null,
  content_id: null,
  inline: 0,
});

export async function uploadToInbox(
  ctx: Ctx,
  access: Access,
  inboxId: string,
  input: { filename?: string; contentType?: string; data: Readable | Buffer },
): Promise<AttachmentRow> {
  const inbox = await findLiveInbox(ctx.db, access.workspaceId, inboxId);
  if (!inbox || !canSeeInbox(access, inbox.id)) throw notFound('inbox');
  const file = await putUpload(ctx, inbox.workspace_id, input);
  const row: InboxUpload = { ...file, workspace_id: inbox.workspace_id, inbox_id: inbox.id, created_at: iso(ctx.clock.now()) };
  try {
    await ctx.db.insertInto('inbox_uploads').values(row).execute();
  } catch (error) {
    await ctx.storage.delete(file.storage_key).catch(() => undefined);
    throw error;
  }
  return asAttachment(row);
}

/** An upload of an inbox the caller reaches, as an attachment (GET /v1/attachments/{id} before it is sent). */
export async function findInboxUploadFor(db: Db, access: Access, id: string): Promise<AttachmentRow | undefined> {
  const row = await db.selectFrom('inbox_uploads').selectAll().where('workspace_id', '=', access.workspaceId).where('id', '=', id).executeTakeFirst();
  return row && canSeeInbox(access, row.inbox_id) ? asAttachment(row) : undefined;
}

/** Checks, before anything is written, that every id names an upload of this inbox (400 naming the entry otherwise). */
export async function checkInboxUploads(db: Db, scope: { workspaceId: string; inboxId: string }, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = new Set((await uploadsOf(db, scope, ids)).map((r) => r.id));
  const i = ids.findIndex((id) => !found.has(id));
  if (i >= 0) {
    const message = `${ids[i]} is not an unsent upload of this inbox (POST /v1/inboxes/{id}/attachments)`;
    throw invalid(`attachment_ids.${i}: ${message}`, { issues: [{ path: `attachment_ids.${i}`, message }] });
  }
}

function uploadsOf(db: Db, scope: { workspaceId: string; inboxId: string }, ids: readonly string[]) {
  return db
    .selectFrom('inbox_uploads')
    .selectAll()
    .where('workspace_id', '=', scope.workspaceId)
    .where('inbox_id', '=', scope.inboxId)
    .where('id', 'in', [...ids])
    .execute();
}

/**
 * In the new conversation's transaction: the uploads leave the inbox and become the first message's
 * files (same ids and storage keys; pictures its html shows in place are inline parts). 400 when one
 * was taken meanwhile.
 */
export async function takeInboxUploads(
  tx: Tx,
  scope: { workspaceId: string; inboxId: string },
  ids: readonly string[],
  html: string | null,
): Promise<StoredAttachment[]> {
  if (ids.length === 0) return [];
  const rows = await uploadsOf(tx.db, scope, ids);
  const removed = rows.length
    ? await tx.db
        .deleteFrom('inbox_uploads')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .executeTakeFirst()
    : { numDeletedRows: 0n };
  if (rows.length !== new Set(ids).size || Number(removed.numDeletedRows) !== rows.length) {
    throw invalid('attachment_ids must name unsent uploads of this inbox', { issues: [{ path: 'attachment_ids', message: 'an upload was used already' }] });
  }
  const inline = new Map(inlineUploads(html, ids).map((p) => [p.id, p.contentId]));
  return rows
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((r) => ({
      id: r.id,
      filename: r.filename,
      contentType: r.content_type,
      size: r.size,
      sha256: r.sha256,
      storageKey: r.storage_key,
      contentId: inline.get(r.id) ?? null,
      inline: inline.has(r.id),
    }));
}

/** A cancelled first message's files go back to the inbox (before its conversation is removed), ready to be sent again. */
export async function returnToInbox(tx: Tx, scope: { inboxId: string }, files: readonly AttachmentRow[]): Promise<void> {
  if (files.length === 0) return;
  await tx.db
    .insertInto('inbox_uploads')
    .values(
      files.map((f) => ({
        id: f.id,
        workspace_id: f.workspace_id,
        inbox_id: scope.inboxId,
        filename: f.filename,
        content_type: f.content_type,
        size: f.size,
        sha256: f.sha256,
        storage_key: f.storage_key,
        created_at: iso(tx.clock.now()),
      })),
    )
    .execute();
  await tx.db
    .deleteFrom('attachments')
    .where(
      'id',
      'in',
      files.map((f) => f.id),
    )
    .execute();
}

/** Removes unsent uploads older than `cutoff` with their files (a batch); the number removed. */
export async function removeOldInboxUploads(ctx: Pick<Ctx, 'db' | 'clock'>, cutoff: string, batch: number): Promise<number> {
  return removeUploads(ctx, (db) => db.selectFrom('inbox_uploads').select('id').where('created_at', '<', cutoff), batch);
}

async function removeUploads(ctx: Pick<Ctx, 'db' | 'clock'>, choose: (db: Db) => ReturnType<typeof chooseAll>, batch: number): Promise<number> {
  return ctx.db.transaction().execute(async (trx) => {
    const ids = (await choose(trx).orderBy('id').limit(batch).execute()).map((r) => r.id);
    if (ids.length === 0) return 0;
    const removed = await trx.deleteFrom('inbox_uploads').where('id', 'in', ids).returning('storage_key').execute();
    await scheduleFileDeletion(
      { db: trx, clock: ctx.clock },
      removed.map((r) => r.storage_key),
    );
    return removed.length;
  });
}

const chooseAll = (db: Db) => db.selectFrom('inbox_uploads').select('id');

/** A deleted workspace's or inbox's unsent uploads and their files. */
export const inboxUploadsWorkspaceStep: WorkspaceDataStep = {
  name: 'inbox_uploads',
  async deleteBatch(ctx, workspaceId, batch) {
    const rows = await removeUploads(ctx, (db) => chooseAll(db).where('workspace_id', '=', workspaceId), batch);
    return { rows, files: rows };
  },
  async deleteInboxBatch(ctx, { workspaceId, inboxId }, batch) {
    const rows = await removeUploads(ctx, (db) => chooseAll(db).where('workspace_id', '=', workspaceId).where('inbox_id', '=', inboxId), batch);
    return { rows, files: rows };
  },
};
