// An uploaded export file as a mail source for the scan and the copy (the same MailSource the IMAP
// mailbox is): folders from the export, UIDs 1…n per folder in the order the messages stood in
// the file, header blocks and whole messages read from the spool written by archive.ts. The UID
// validity is taken from the file's SHA-256, so the same file always gives the same source keys.
import fs from 'node:fs';
import path from 'node:path';
import type { HeaderFetch, ImapFolder, OpenedFolder } from './imap.js';
import type { MailSource } from './mail-source.js';
import { decodeRecord, EXPORT_LIMITS, type ExportManifest, FLAG_BITS, FLAGS_FROM_HEADERS, type IndexRecord, RECORD_BYTES } from './spool.js';

/** Bytes read first for a header block (most are a few KiB). */
const FIRST_HEADER_READ = 16 * 1024;

function flagNames(bits: number): string[] {
  return FLAG_BITS.filter(([, bit]) => bits & bit).map(([name]) => name);
}

/** mbox keeps flags in Status (R: seen, O: old) and X-Status (A: answered, F: flagged, D: deleted, T: draft). */
function mboxFlags(headers: string): number {
  let bits = 0;
  const status = /^Status:[ \t]*([A-Za-z]*)/im.exec(headers)?.[1] ?? '';
  const xStatus = /^X-Status:[ \t]*([A-Za-z]*)/im.exec(headers)?.[1] ?? '';
  if (status.includes('R')) bits |= 1;
  if (xStatus.includes('A')) bits |= 2;
  if (xStatus.includes('F')) bits |= 4;
  if (xStatus.includes('T')) bits |= 8;
  if (xStatus.includes('D')) bits |= 16;
  return bits;
}

/** The header block: everything before the first empty line. */
function headerBlock(head: Buffer): Buffer {
  const lf = head.indexOf('\n\n');
  const crlf = head.indexOf('\r\n\r\n');
  const ends = [lf === -1 ? -1 : lf + 1, crlf === -1 ? -1 : crlf + 2].filter((e) => e >= 0);
  return ends.length ? head.subarray(0, Math.min(...ends)) : head;
}

export class FileMailbox implements MailSource {
  private open_: OpenedFolder | undefined;
  private closed = false;
  /**
   * The first read of every header block goes here (its block is copied out): a fresh 16 KiB
   * buffer per message left the allocator's heap full of holes, and the server's RSS grew with
   * every message a scan read.
   */
  private readonly scratch = Buffer.allocUnsafeSlow(FIRST_HEADER_READ);
  private scratchBusy = false;

  private constructor(
    private readonly manifest: ExportManifest,
    private readonly index: Buffer,
    /** Record numbers of each folder's messages, by folder number (UID n is element n-1). */
    private readonly byFolder: Uint32Array[],
    private readonly messages: fs.promises.FileHandle,
  ) {}

  static async open(dir: string): Promise<FileMailbox> {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as ExportManifest;
    const index = fs.readFileSync(path.join(dir, 'index'));
    const count = Math.floor(index.length / RECORD_BYTES);
    const byFolder = manifest.folders.map((f) => new Uint32Array(f.messages));
    const filled = new Uint32Array(manifest.folders.length);
    for (let i = 0; i < count; i++) {
      const folder = index.readUInt32LE(i * RECORD_BYTES);
      if (folder < byFolder.length && filled[folder] < byFolder[folder].length) byFolder[folder][filled[folder]++] = i;
    }
    const messages = await fs.promises.open(path.join(dir, 'messages'), 'r');
    return new FileMailbox(manifest, index, byFolder, messages);
  }

  get usable(): boolean {
    return !this.closed;
  }

  get uidValidity(): string {
    return `f${this.manifest.sha256.slice(0, 16)}`;
  }

  async folders(): Promise<ImapFolder[]> {
    return this.manifest.folders.map((f) => ({
      path: f.path,
      name: f.path.split('/').pop() ?? f.path,
      delimiter: '/',
      specialUse: f.specialUse,
      noSelect: false,
    }));
  }

  private folderNumber(folderPath: string): number {
    const n = this.manifest.folders.findIndex((f) => f.path === folderPath);
    if (n === -1) throw new Error(`the export has no folder ${JSON.stringify(folderPath)}`);
    return n;
  }

  async examine(folderPath: string): Promise<OpenedFolder> {
    const n = this.folderNumber(folderPath);
    const exists = this.byFolder[n].length;
    this.open_ = { path: folderPath, uidValidity: this.uidValidity, uidNext: exists + 1, exists };
    return this.open_;
  }

  private records(): Uint32Array {
    if (!this.open_) throw new Error('no folder is open');
    return this.byFolder[this.folderNumber(this.open_.path)];
  }

  private record(uid: number): IndexRecord | undefined {
    const list = this.records();
    if (!Number.isInteger(uid) || uid < 1 || uid > list.length) return undefined;
    return decodeRecord(this.index, list[uid - 1] * RECORD_BYTES);
  }

  async uids(fromUid = 1): Promise<number[]> {
    const n = this.records().length;
    const out: number[] = [];
    for (let uid = Math.max(1, fromUid); uid <= n; uid++) out.push(uid);
    return out;
  }

  private async read(offset: number, length: number, into?: Buffer): Promise<Buffer> {
    const buf = into ? into.subarray(0, length) : Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await this.messages.read(buf, done, length - done, offset + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return done === length ? buf : buf.subarray(0, done);
  }

  /** A message's header block: a first small read, a larger one only for very long headers; copied out so the read buffer goes. */
  private async headerOf(r: IndexRecord): Promise<Buffer> {
    const useScratch = !this.scratchBusy;
    this.scratchBusy = true;
    try {
      let read = await this.read(r.offset, Math.min(r.stored, FIRST_HEADER_READ), useScratch ? this.scratch : undefined);
      let block = headerBlock(read);
      if (block.length === read.length && r.stored > read.length) {
        read = await this.read(r.offset, Math.min(r.stored, EXPORT_LIMITS.headerKeepBytes));
        block = headerBlock(read);
      }
      return Buffer.from(block);
    } finally {
      if (useScratch) this.scratchBusy = false;
    }
  }

  async *headers(range: string, _fields: string[]): AsyncGenerator<HeaderFetch> {
    const m = /^(\d+)(?::(\d+|\*))?$/.exec(range);
    if (!m) throw new Error(`bad UID range ${range}`);
    const n = this.records().length;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : m[2] === '*' ? n : Math.min(n, Number(m[2]));
    for (let uid = Math.max(1, from); uid <= to; uid++) {
      const r = this.record(uid)!;
      const head = await this.headerOf(r);
      const flags = r.flags & FLAGS_FROM_HEADERS ? mboxFlags(head.toString('latin1')) : r.flags;
      yield { uid, flags: flagNames(flags), internalDate: r.date, size: r.size, headers: head };
    }
  }

  async *sources(uids: number[]): AsyncGenerator<{ uid: number; source: Buffer }> {
    for (const uid of uids) {
      const r = this.record(uid);
      // A message over the size limit was never kept whole: it is not served (the plan skips it).
      if (!r || r.oversize) continue;
      yield { uid, source: await this.read(r.offset, r.stored) };
    }
  }

  async logout(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.messages.close();
  }
}
