// A message of the copy as it is read from the source: its item, the parsed mail and the files stored for it.
import type { StoredAttachment } from '../../conversations/service.js';
import type { MailboxMigrationItemsTable } from '../../db/schema.js';
import type { InboundMail } from '../../mail/parse.js';

export type ItemRow = MailboxMigrationItemsTable;

export interface Fetched {
  item: ItemRow;
  /** The parsed message; attachment contents are dropped once stored. */
  mail: InboundMail;
  /** The id a message without Message-ID was registered under before mail digests (from its raw source, which is not kept). */
  legacyId: string | null;
  files: StoredAttachment[];
  omitted: number;
  rawStored?: { storageKey: string; size: number; sha256: string };
  written: string[];
}
