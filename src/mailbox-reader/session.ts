// One reader session: connect, find INBOX and the Sent folder (by special use), take what arrived
// since the stored last UID of each, then wait with IDLE (new mail in INBOX wakes it at once) or
// sleep for the poll interval, and again. Each message is stored before its UID is recorded, so a
// process killed between the two reads it again and the digest finds it stored (never doubled);
// UIDs are recorded per UIDVALIDITY, so a restart misses nothing.
import { findChannel } from '../channels/store.js';
import type { Ctx } from '../context.js';
import type { ImapFolder, ReadOnlyMailbox } from '../mailbox-migration/sources/imap.js';
import { iso } from '../platform/clock.js';
import { openMailbox, type ReaderLogin } from './connection.js';
import { storeReceived, storeSent } from './mail.js';
import { advanceFolder, type FolderRow, findFolder, type ReaderRow, saveFolder, setReaderState } from './store.js';

/** Folders never read, whatever their name. */
const NEVER = new Set(['\\Junk', '\\Trash', '\\Drafts']);

export function sentFolderOf(folders: readonly ImapFolder[]): ImapFolder | undefined {
  return folders.find((f) => f.specialUse === '\\Sent' && !f.noSelect);
}

export function inboxOf(folders: readonly ImapFolder[]): ImapFolder | undefined {
  return folders.find((f) => f.path.toUpperCase() === 'INBOX' && !f.noSelect && !NEVER.has(f.specialUse ?? ''));
}

const CHUNK = 20;

export class ReaderSession {
  private mailbox: ReadOnlyMailbox | undefined;
  stopped = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly ctx: Ctx,
    private readonly row: ReaderRow,
    private readonly onConnected: (mode: 'idle' | 'polling') => Promise<void>,
  ) {}

  /** Ends the session: breaks the wait and closes the connection. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
    this.mailbox?.close();
  }

  /** Runs until stopped (resolves) or a failure (rejects with it). */
  async run(login: ReaderLogin): Promise<void> {
    const { ctx } = this;
    this.mailbox = await openMailbox(ctx, login.server, 'password' in login ? login.password : { accessToken: login.accessToken });
    const mailbox = this.mailbox;
    try {
      if (this.stopped) return;
      const folders = await mailbox.folders();
      const inbox = inboxOf(folders);
      if (!inbox) throw new Error('the mailbox has no INBOX');
      const sent = sentFolderOf(folders);
      const idle = mailbox.client.capabilities.has('IDLE');
      let connected = false;
      while (!this.stopped) {
        if (sent) await this.take(mailbox, 'sent', sent.path);
        if (this.stopped) break;
        await this.take(mailbox, 'inbox', inbox.path);
        if (this.stopped) break;
        // Connected once every folder has its starting point: mail from then on is taken.
        if (!connected) await this.onConnected(idle ? 'idle' : 'polling');
        connected = true;
        await (idle ? this.idle(mailbox) : this.sleep());
      }
    } finally {
      await mailbox.logout();
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.ctx.config.mailboxReader.pollMs);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** IDLE on the open INBOX until new mail, the poll interval (for Sent) or stop; then DONE (by the next command). */
  private async idle(mailbox: ReadOnlyMailbox): Promise<void> {
    const client = mailbox.client;
    let woken!: () => void;
    const wait = new Promise<void>((resolve) => {
      woken = resolve;
    });
    const timer = setTimeout(() => woken(), this.ctx.config.mailboxReader.pollMs);
    this.wake = woken;
    const onExists = () => woken();
    client.on('exists', onExists);
    client.on('close', onExists);
    const idling = client.idle().catch((error: unknown) => error);
    try {
      await wait;
    } finally {
      clearTimeout(timer);
      client.off('exists', onExists);
      client.off('close', onExists);
    }
    if (this.stopped || !client.usable) {
      if (!this.stopped) throw new Error('the server closed the connection');
      return;
    }
    await client.noop();
    const failed = await idling;
    if (failed instanceof Error && !this.stopped) throw failed;
  }

  /** Takes the folder's messages after the stored last UID. */
  private async take(mailbox: ReadOnlyMailbox, role: FolderRow['role'], path: string): Promise<void> {
    const { ctx, row } = this;
    const box = await mailbox.examine(path);
    const now = () => iso(ctx.clock.now());
    const stored = await findFolder(ctx.db, row.channel_id, role);
    let uids: number[];
    if (!stored || stored.path !== path) {
      // First connection to this folder: mail from now on (history is a migration's job).
      const last = box.uidNext > 0 ? box.uidNext - 1 : Math.max(0, ...(await mailbox.uids()));
      await saveFolder(ctx.db, { channel_id: row.channel_id, role, path, uid_validity: box.uidValidity, last_uid: last, updated_at: now() });
      return;
    }
    if (stored.uid_validity !== box.uidValidity) {
      // The server renumbered the folder: everything since the last read is taken again (the digest
      // keeps what is stored already from being stored twice), then the new numbering is recorded.
      const since = new Date(Date.parse(stored.updated_at) - 86_400_000);
      const found = await mailbox.client.search({ since }, { uid: true });
      uids = (found || []).sort((a, b) => a - b);
      await saveFolder(ctx.db, { ...stored, uid_validity: box.uidValidity, last_uid: 0, updated_at: now() });
      ctx.log.info('mailbox reader: folder renumbered (UIDVALIDITY changed)', { channel_id: row.channel_id, folder: path, messages: uids.length });
    } else {
      uids = (await mailbox.uids(stored.last_uid + 1)).filter((u) => u > stored.last_uid);
    }
    const channel = await findChannel(ctx.db, row.channel_id);
    if (!channel) return;
    for (let i = 0; i < uids.length && !this.stopped; i += CHUNK) {
      for await (const m of mailbox.sources(uids.slice(i, i + CHUNK))) {
        try {
          if (role === 'inbox') await storeReceived(ctx, channel, m.source);
          else await storeSent(ctx, channel, m.source);
        } catch (error) {
          // A message that cannot be stored (too large, unreadable) is skipped with a log line; the rest go on.
          if (!(error as { status?: number }).status) throw error;
          ctx.log.warn('mailbox reader: message skipped', { channel_id: row.channel_id, folder: path, uid: m.uid, reason: (error as Error).message });
        }
        await advanceFolder(ctx.db, row.channel_id, role, box.uidValidity, m.uid, now());
        await setReaderState(ctx.db, row.channel_id, ctx.instanceId, { last_read_at: now() });
        if (this.stopped) break;
      }
    }
  }
}
