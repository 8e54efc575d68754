// What the scan and the copy read mail through: an old mailbox over IMAP (ReadOnlyMailbox, imap.ts)
// or an uploaded export file (FileMailbox, file-source.ts). Folders are opened read-only, messages
// are addressed by folder and UID, and the UID validity names the version of the folder.
import type { HeaderFetch, ImapFolder, OpenedFolder } from './imap.js';

export interface MailSource {
  /** False once the source cannot be used any more (a closed connection); the worker opens it again. */
  readonly usable: boolean;
  folders(): Promise<ImapFolder[]>;
  examine(path: string): Promise<OpenedFolder>;
  /** UIDs of the open folder from `fromUid` on, ascending. */
  uids(fromUid?: number): Promise<number[]>;
  /** Header blocks, flags, dates and sizes of the open folder's messages in a UID range ("1:1000"). */
  headers(uids: string, fields: string[]): AsyncGenerator<HeaderFetch>;
  /** Whole messages of the open folder; UIDs that are gone (or never kept) are left out. */
  sources(uids: number[]): AsyncGenerator<{ uid: number; source: Buffer }>;
  logout(): Promise<void>;
}
