// What the scan stores of one message, read from its header block. Its own module (no database) so
// that the parse worker reads a scan's header blocks too (`ScanBatch`, src/mail/parse-worker.ts):
// the main thread then only reads the FETCH and writes the rows.
import { normalizeAddress } from '../../contacts/address.js';
import type { MailboxMigrationItemsTable } from '../../db/tables/mailbox-migration.js';
import { type InboundMail, parseHeaderBlock } from '../../mail/parse.js';
import { iso } from '../../platform/clock.js';

export function sourceKey(folder: string, uidValidity: string, uid: number): string {
  return `imap:${uidValidity}:${uid}:${folder}`;
}

function cleanAddress(raw: string | null | undefined): string | null {
  if (!raw) return null;
  try {
    return normalizeAddress(raw);
  } catch {
    return null;
  }
}

export type HeaderParser = (headers: Buffer) => Promise<InboundMail>;

/** What the scan stores of one message, from its header block. */
export async function itemFromHeaders(
  input: {
    migrationId: string;
    sourceKey: string;
    folder: string;
    uid: number | null;
    headers: Buffer;
    size: number;
    internalDate: Date | null;
    flags: string[];
    gmailLabels?: string[];
  },
  parse: HeaderParser = parseHeaderBlock,
): Promise<MailboxMigrationItemsTable> {
  const mail = await parse(input.headers);
  // The Date header, unless missing or absurd (then the server's receipt time).
  const received = input.internalDate && !Number.isNaN(input.internalDate.getTime()) ? input.internalDate : null;
  let sent = mail.date;
  if (!sent || sent.getTime() < Date.UTC(1980, 0, 1) || (received && sent.getTime() > received.getTime() + 2 * 86_400_000)) sent = received ?? sent;
  const refs = [...new Set([...mail.inReplyTo, ...mail.references])].filter((r) => r !== mail.messageId);
  const recipients = [...new Set(mail.headerRecipients.map(cleanAddress).filter((a): a is string => !!a))];
  return {
    migration_id: input.migrationId,
    source_key: input.sourceKey,
    folder: input.folder,
    uid: input.uid,
    rfc_id: mail.messageId,
    refs: refs.length ? JSON.stringify(refs.slice(0, 100)) : null,
    thread_key: null,
    sent_at: iso(sent ?? new Date(0)),
    size: input.size,
    from_address: cleanAddress(mail.from.address),
    from_name: mail.from.name,
    recipients: recipients.length ? JSON.stringify(recipients.slice(0, 100)) : null,
    subject: mail.subject ? mail.subject.slice(0, 500) : null,
    flags: input.flags.length ? JSON.stringify(input.flags) : null,
    gmail_labels: input.gmailLabels?.length ? JSON.stringify(input.gmailLabels.slice(0, 200)) : null,
    automatic: mail.automatic ? 1 : 0,
    team: 0,
    status: 'planned',
    skip_reason: null,
    error: null,
    attempts: 0,
    message_id: null,
    conversation_id: null,
    copied_at: null,
  };
}

/** One fetched message of a scan, without its header block (which a ScanBatch carries in one buffer). */
export interface ScannedMessage {
  uid: number;
  size: number;
  /** INTERNALDATE in milliseconds (a Date does not cross to a worker as cheaply). */
  internalDate: number | null;
  flags: string[];
  labels?: string[];
}

/**
 * Header blocks of one folder read in one go: `blocks` holds them back to back (block i ends at
 * `ends[i]`), one buffer that is moved to the parse worker instead of one message per block.
 */
export interface ScanBatch {
  migrationId: string;
  folder: string;
  uidValidity: string;
  messages: ScannedMessage[];
  blocks: Uint8Array;
  ends: number[];
}

/** A batch's items, in its order; every block must be one parseHeaderBlock reads directly (bounded work). */
export async function scannedItems(batch: ScanBatch): Promise<MailboxMigrationItemsTable[]> {
  const items: MailboxMigrationItemsTable[] = [];
  let start = 0;
  for (let i = 0; i < batch.messages.length; i++) {
    const m = batch.messages[i];
    const end = batch.ends[i];
    const headers = Buffer.from(batch.blocks.buffer, batch.blocks.byteOffset + start, end - start);
    start = end;
    items.push(
      await itemFromHeaders({
        migrationId: batch.migrationId,
        sourceKey: sourceKey(batch.folder, batch.uidValidity, m.uid),
        folder: batch.folder,
        uid: m.uid,
        headers,
        size: m.size,
        internalDate: m.internalDate === null ? null : new Date(m.internalDate),
        flags: m.flags,
        gmailLabels: m.labels,
      }),
    );
  }
  return items;
}
