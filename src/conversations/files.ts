// Files of conversations (attachments and raw .eml) live in storage. Deleting conversations writes
// a deletion job with their storage keys in the same transaction, so a crash between the database
// change and the file removal loses nothing: the job runs (again) after a restart.

import type { Readable } from 'node:stream';
import { deleteVisitsOfConversations } from '../analytics/visit-store.js';
import { fileDeletionHeldUntil, retryAfterHold } from '../backup/hold.js';
import type { Ctx } from '../context.js';
import { deleteCustomFieldValuesOf } from '../custom-fields/store.js';
import type { Db } from '../db/schema.js';
import { cleanContentType, cleanFilename } from '../mail/parse.js';
import { deleteMailOfConversations } from '../mail/store.js';
import type { Clock } from '../platform/clock.js';
import { tooLarge } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { enqueue, type JobKind } from '../platform/jobs.js';
import { FileTooLargeError, type Storage } from '../platform/storage.js';

export const FILES_DELETE_JOB = 'files.delete';
const KEYS_PER_JOB = 200;

export function attachmentKey(workspaceId: string, attachmentId: string): string {
  return `${workspaceId}/att/${attachmentId}`;
}

/** Writes an uploaded file to storage (at most the attachment limit: 413 past it); the caller records it. */
export async function putUpload(
  ctx: Pick<Ctx, 'storage' | 'config'>,
  workspaceId: string,
  input: { filename?: string; contentType?: string; data: Readable | Buffer; maxBytes?: number },
) {
  const id = newId('att');
  const key = attachmentKey(workspaceId, id);
  const contentType = cleanContentType(input.contentType?.split(';')[0]);
  let stored: Awaited<ReturnType<typeof ctx.storage.put>>;
  try {
    stored = await ctx.storage.put(key, input.data, { maxBytes: input.maxBytes ?? ctx.config.attachmentMaxBytes, contentType });
  } catch (error) {
    if (error instanceof FileTooLargeError) throw tooLarge(`the attachment is larger than ${ctx.config.attachmentMaxBytes} bytes`);
    throw error;
  }
  return { id, filename: cleanFilename(input.filename, contentType, 0), content_type: contentType, size: stored.size, sha256: stored.sha256, storage_key: key };
}

export function rawEmailKey(workspaceId: string, rawId: string): string {
  return `${workspaceId}/eml/${rawId}`;
}

export async function storageKeysOfConversations(db: Db, conversationIds: readonly string[]): Promise<string[]> {
  if (conversationIds.length === 0) return [];
  const keys: string[] = [];
  for (let i = 0; i < conversationIds.length; i += 500) {
    const chunk = conversationIds.slice(i, i + 500);
    const [att, raw] = await Promise.all([
      db.selectFrom('attachments').select('storage_key').where('conversation_id', 'in', chunk).execute(),
      db.selectFrom('messages').select('raw_storage_key').where('conversation_id', 'in', chunk).where('raw_storage_key', 'is not', null).execute(),
    ]);
    keys.push(...att.map((r) => r.storage_key), ...raw.map((r) => r.raw_storage_key!));
  }
  return keys;
}

/** Stores the deletion of these files as jobs (run after the surrounding transaction commits); returns the job ids. */
export async function scheduleFileDeletion(ctx: { db: Db; clock: Clock }, keys: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_JOB) {
    ids.push(await enqueue(ctx.db, ctx.clock, { kind: FILES_DELETE_JOB, payload: { keys: keys.slice(i, i + KEYS_PER_JOB) } }));
  }
  return ids;
}

const PARALLEL_DELETES = 16;

async function deleteKeys(storage: Storage, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += PARALLEL_DELETES) await Promise.all(keys.slice(i, i + PARALLEL_DELETES).map((key) => storage.delete(key)));
}

/**
 * Removes the files of a committed deletion at once instead of waiting for its jobs, then the jobs.
 * While a backup holds file deletion nothing happens here and the jobs do it later.
 * Returns whether the files are gone.
 */
export async function deleteScheduledFilesNow(
  ctx: Pick<Ctx, 'db' | 'clock' | 'storage'>,
  jobIds: readonly string[],
  keys: readonly string[],
): Promise<boolean> {
  if (await fileDeletionHeldUntil(ctx)) return false;
  await deleteKeys(ctx.storage, keys);
  if (jobIds.length)
    await ctx.db
      .deleteFrom('jobs')
      .where('id', 'in', [...jobIds])
      .execute();
  return true;
}

/**
 * Deletes conversations with their messages, notes, events, attachments and raw e-mails; the
 * stored files go through the deletion job. Call inside a transaction.
 */
export async function deleteConversationsWithFiles(
  ctx: { db: Db; clock: Clock },
  conversationIds: readonly string[],
): Promise<{ conversations: number; files: number; keys: string[]; fileJobIds: string[] }> {
  const keys = await storageKeysOfConversations(ctx.db, conversationIds);
  const fileJobIds = await scheduleFileDeletion(ctx, keys);
  let deleted = 0;
  for (let i = 0; i < conversationIds.length; i += 500) {
    const chunk = conversationIds.slice(i, i + 500);
    // Children first: explicit deletes do not depend on the dialect's cascade behaviour.
    await deleteMailOfConversations(ctx.db, chunk);
    await deleteVisitsOfConversations(ctx.db, chunk);
    await ctx.db.deleteFrom('attachments').where('conversation_id', 'in', chunk).execute();
    await ctx.db.deleteFrom('messages').where('conversation_id', 'in', chunk).execute();
    await ctx.db.deleteFrom('conversation_labels').where('conversation_id', 'in', chunk).execute();
    await deleteCustomFieldValuesOf(ctx.db, chunk);
    await ctx.db
      .deleteFrom('conversation_moves')
      .where((eb) => eb.or([eb('source_id', 'in', chunk), eb('target_id', 'in', chunk)]))
      .execute();
    const r = await ctx.db.deleteFrom('conversations').where('id', 'in', chunk).executeTakeFirst();
    deleted += Number(r.numDeletedRows);
  }
  return { conversations: deleted, files: keys.length, keys, fileJobIds };
}

export function filesDeleteJob(ctx: Pick<Ctx, 'storage' | 'db' | 'clock'>): JobKind<{ keys: string[] }> {
  return {
    kind: FILES_DELETE_JOB,
    async run({ keys }) {
      // A backup archiving the files after its snapshot: wait until it is done.
      const heldUntil = await fileDeletionHeldUntil(ctx);
      if (heldUntil) return { retryAt: retryAfterHold(ctx, heldUntil) };
      await deleteKeys(ctx.storage, keys);
    },
  };
}
