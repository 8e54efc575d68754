// Up to two read-only connections to one old mailbox, each left on the folder it last opened.
//
// A copy batch holds whole threads, and a thread's messages lie in several folders (the customer's
// in INBOX, the team's replies in Sent): on one connection every batch opens a folder again, and a
// server may resync a large folder on each EXAMINE. Dovecot's maildir reads the folder's whole
// directory then: ~45 ms at 50,000 messages, a quarter of a 100,000-message copy (bench/import).
// The second connection is opened when a second folder is first needed; when the server refuses it
// (a provider's connection limit, a failed sign-in) the first one is shared, switching folders.
import type { HeaderFetch, ImapFolder, OpenedFolder, ReadOnlyMailbox } from './imap.js';
import type { MailSource } from './mail-source.js';

const CONNECTIONS = 2;

export class FolderConnections implements MailSource {
  /** Least recently used first. */
  private readonly open: ReadOnlyMailbox[];
  private current: ReadOnlyMailbox;
  private mayOpenMore = true;

  constructor(
    first: ReadOnlyMailbox,
    private readonly connect: () => Promise<ReadOnlyMailbox>,
  ) {
    this.open = [first];
    this.current = first;
  }

  /** Every connection usable: when one fails the worker opens the source again, as with one. */
  get usable(): boolean {
    return this.open.every((c) => c.usable);
  }

  /** How many connections are open (tests). */
  get connections(): number {
    return this.open.length;
  }

  folders(): Promise<ImapFolder[]> {
    return this.current.folders();
  }

  async examine(path: string): Promise<OpenedFolder> {
    let chosen = this.open.find((c) => c.openFolder === path);
    if (!chosen && this.mayOpenMore && this.open.length < CONNECTIONS) {
      try {
        chosen = await this.connect();
        this.open.push(chosen);
      } catch {
        this.mayOpenMore = false;
      }
    }
    chosen ??= this.open[0];
    this.open.splice(this.open.indexOf(chosen), 1);
    this.open.push(chosen);
    this.current = chosen;
    return chosen.examine(path);
  }

  uids(fromUid?: number): Promise<number[]> {
    return this.current.uids(fromUid);
  }

  headers(uids: string, fields: string[]): AsyncGenerator<HeaderFetch> {
    return this.current.headers(uids, fields);
  }

  sources(uids: number[]): AsyncGenerator<{ uid: number; source: Buffer }> {
    return this.current.sources(uids);
  }

  async logout(): Promise<void> {
    await Promise.all(this.open.map((c) => c.logout()));
  }
}
