// A parsed mail as svc stores it, whichever way it came: its files (the original .eml and the
// attachments) written first, then the message that refers to them. Shared by mail that comes in
// (./ingest.ts) and mail the mailbox reader finds in the Sent folder (src/mailbox-reader/mail.ts).
// Files first: if the process dies before the commit they are unreferenced, never missing.
import type { Transaction } from 'kysely';
import type { Ctx } from '../context.js';
import { attachmentKey, rawEmailKey } from '../conversations/files.js';
import type { NewMessage, StoredAttachment } from '../conversations/service.js';
import type { Database } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { newId } from '../platform/ids.js';
import type { WrittenFile } from '../platform/storage.js';
import { type InboundMail, mailHeadersOf } from './parse.js';
import { sanitizeMailHtml } from './sanitize.js';

export interface MailFiles {
  files: StoredAttachment[];
  raw: NewMessage['raw'];
  /** Runs the message's transaction once the files are safe: inside the caller's transaction, or group-committed with them. */
  transact<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
}

/**
 * Writes the original (unless keepRaw is false) and the attachments side by side. Inside a caller's
 * transaction (an import) each is flushed before it is used; otherwise the group commit flushes them
 * together (each directory once per batch) before its commit. Every key written is pushed to
 * `written`, for the caller to delete when the message is not stored after all.
 */
export async function writeMailFiles(
  ctx: Ctx,
  input: { workspaceId: string; mail: InboundMail; raw: Buffer; keepRaw?: boolean },
  written: string[],
): Promise<MailFiles> {
  const { workspaceId, mail } = input;
  const joinsTransaction = ctx.db.isTransaction;
  const store = (key: string, data: Buffer, contentType: string) =>
    (joinsTransaction ? ctx.storage.put(key, data, { contentType }).then((r) => ({ key, ...r })) : ctx.storage.write(key, data)).then(
      (r) => (written.push(key), r),
    );
  const rawId = input.keepRaw !== false ? newId('eml') : undefined;
  const fileIds = mail.attachments.map(() => newId('att'));
  const writes = await Promise.allSettled([
    rawId ? store(rawEmailKey(workspaceId, rawId), input.raw, 'message/rfc822') : undefined,
    ...mail.attachments.map((a, i) => store(attachmentKey(workspaceId, fileIds[i]), a.content, a.contentType)),
  ]);
  const failed = writes.find((w) => w.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  const stored = writes.map((w) => (w as PromiseFulfilledResult<WrittenFile | undefined>).value);
  const unflushed = joinsTransaction ? [] : stored.filter((w) => w !== undefined);
  const files = mail.attachments.map((a, i) => {
    const s = stored[i + 1]!;
    return {
      id: fileIds[i],
      filename: a.filename,
      contentType: a.contentType,
      size: s.size,
      sha256: s.sha256,
      storageKey: attachmentKey(workspaceId, fileIds[i]),
      contentId: a.contentId,
      inline: a.inline,
    };
  });
  const raw = rawId ? { storageKey: stored[0]!.key, size: stored[0]!.size, sha256: stored[0]!.sha256 } : undefined;
  return {
    files,
    raw,
    transact: (work) => (joinsTransaction ? inTransaction(ctx.db, work) : ctx.writes.run(work, { files: unflushed })),
  };
}

/** The message of a stored mail (its author is set by the caller where it is not the system). */
export function mailMessage(
  mail: InboundMail,
  stored: Pick<MailFiles, 'files' | 'raw'>,
  opts: { id: string; direction: 'in' | 'out'; replyTo: string | null; details?: Record<string, unknown>; createdAt?: Date },
): NewMessage {
  const cids = new Map(stored.files.filter((f) => f.contentId).map((f) => [f.contentId!, f.id]));
  return {
    id: opts.id,
    kind: 'message',
    direction: opts.direction,
    author: { type: 'system' },
    body: mail.text,
    html: mail.html ? sanitizeMailHtml(mail.html, cids) : null,
    subject: mail.subject,
    automatic: mail.automatic,
    ...(opts.details ? { details: opts.details } : {}),
    mail: { messageId: mail.messageId, references: mail.references, replyTo: opts.replyTo, headers: mailHeadersOf(mail) },
    files: stored.files,
    attachmentsOmitted: mail.attachmentsOmitted,
    raw: stored.raw,
    createdAt: opts.createdAt,
  };
}
