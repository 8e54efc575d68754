// What an export file is read into (archive.ts reads it): the spool of messages with its fixed-size
// index records, the manifest, and the limits and refusals that bound the reading.
import fs from 'node:fs';
import path from 'node:path';

export const EXPORT_LIMITS = {
  /** Entries (files and directories) in a zip. */
  maxEntries: 200_000,
  /** Uncompressed bytes of all entries together. */
  maxTotalBytes: 64 * 1024 ** 3,
  /** Uncompressed / compressed size of one entry (checked for entries over ratioFloorBytes). */
  maxRatio: 100,
  ratioFloorBytes: 1024 * 1024,
  /** Folders an export may hold. */
  maxFolders: 1000,
  /** Bytes of a message over the size limit that are kept (its header block, for the dry run). */
  headerKeepBytes: 256 * 1024,
};

export type RefusalReason =
  | 'not_an_export'
  | 'damaged'
  | 'unsafe_name'
  | 'too_many_entries'
  | 'too_large'
  | 'compression_ratio'
  | 'encrypted'
  | 'unsupported'
  | 'empty';

/** The file cannot be read safely; nothing of it is kept. */
export class ExportRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/** How far the read is: uncompressed bytes read of the total, and the messages found so far. */
export interface ReadProgress {
  doneBytes: number;
  totalBytes: number;
  messages: number;
}

/**
 * Called as the read goes on (the caller decides how often it reports); what it throws ends the
 * read as it is (the spool is abandoned), e.g. when the migration was cancelled meanwhile.
 */
export type ProgressListener = (progress: ReadProgress) => Promise<void>;

export class Meter {
  doneBytes = 0;
  totalBytes = 0;
  constructor(
    private readonly spool: Spool,
    private readonly listener: ProgressListener | undefined,
  ) {}

  async *count(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) {
      this.doneBytes += chunk.length;
      if (this.listener) await this.listener({ doneBytes: this.doneBytes, totalBytes: this.totalBytes, messages: this.spool.count });
      yield chunk;
    }
  }
}

export type ExportKind = 'zip' | 'mbox';
export type ContentKind = 'mbox' | 'eml' | 'maildir';

export interface ExportFolder {
  path: string;
  specialUse: string | null;
  messages: number;
}

export interface ExportManifest {
  version: 1;
  kind: ExportKind;
  contents: ContentKind[];
  bytes: number;
  sha256: string;
  messages: number;
  /** Messages over the size limit (only their headers are kept). */
  oversize: number;
  folders: ExportFolder[];
  /** Entries that were not read: nested archives, files that are not mail (first 100). */
  ignored: { name: string; reason: 'nested_archive' | 'not_mail' }[];
  ignored_count: number;
  read_at: string;
}

/** One message's record in `index`. */
export const RECORD_BYTES = 40;
export const FLAG_BITS: readonly [string, number][] = [
  ['\\Seen', 1],
  ['\\Answered', 2],
  ['\\Flagged', 4],
  ['\\Draft', 8],
  ['\\Deleted', 16],
];
/** The record's flags are not known from the archive (mbox): read Status/X-Status from the headers. */
export const FLAGS_FROM_HEADERS = 128;

export interface IndexRecord {
  folder: number;
  flags: number;
  oversize: boolean;
  stored: number;
  offset: number;
  size: number;
  date: Date | null;
}

export function decodeRecord(buf: Buffer, at = 0): IndexRecord {
  const date = buf.readDoubleLE(at + 28);
  return {
    folder: buf.readUInt32LE(at),
    flags: buf[at + 4],
    oversize: buf[at + 5] === 1,
    stored: buf.readUInt32LE(at + 8),
    offset: buf.readDoubleLE(at + 12),
    size: buf.readDoubleLE(at + 20),
    date: Number.isNaN(date) ? null : new Date(date),
  };
}

function encodeRecord(r: IndexRecord): Buffer {
  const buf = Buffer.alloc(RECORD_BYTES);
  buf.writeUInt32LE(r.folder, 0);
  buf[4] = r.flags;
  buf[5] = r.oversize ? 1 : 0;
  buf.writeUInt32LE(r.stored, 8);
  buf.writeDoubleLE(r.offset, 12);
  buf.writeDoubleLE(r.size, 20);
  buf.writeDoubleLE(r.date ? r.date.getTime() : Number.NaN, 28);
  return buf;
}

const FLUSH_BYTES = 1024 * 1024;

/** Appends messages to the spool and their records to the index, with bounded buffers. */
export class Spool {
  private readonly messages: fs.promises.FileHandle;
  private readonly index: fs.promises.FileHandle;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private position = 0;
  /** Bytes of the spool on disk (position minus what is pending). */
  private written = 0;
  private records: Buffer[] = [];
  private current: IndexRecord | undefined;
  readonly folders: ExportFolder[] = [];
  private readonly folderNumbers = new Map<string, number>();
  count = 0;
  oversize = 0;

  private constructor(
    messages: fs.promises.FileHandle,
    index: fs.promises.FileHandle,
    private readonly maxMessageBytes: number,
  ) {
    this.messages = messages;
    this.index = index;
  }

  static async open(dir: string, maxMessageBytes: number): Promise<Spool> {
    const messages = await fs.promises.open(path.join(dir, 'messages'), 'w', 0o600);
    const index = await fs.promises.open(path.join(dir, 'index'), 'w', 0o600);
    return new Spool(messages, index, maxMessageBytes);
  }

  folderNumber(folder: string, specialUseFlag: string | null): number {
    let n = this.folderNumbers.get(folder);
    if (n === undefined) {
      if (this.folders.length >= EXPORT_LIMITS.maxFolders)
        throw new ExportRefused('too_many_entries', `the export holds more than ${EXPORT_LIMITS.maxFolders} folders`);
      n = this.folders.length;
      this.folders.push({ path: folder, specialUse: specialUseFlag, messages: 0 });
      this.folderNumbers.set(folder, n);
    }
    return n;
  }

  begin(folder: number, date: Date | null, flags: number): void {
    this.current = { folder, flags, oversize: false, stored: 0, offset: this.position, size: 0, date };
  }

  async write(chunk: Buffer): Promise<void> {
    const c = this.current!;
    c.size += chunk.length;
    if (!c.oversize && c.size > this.maxMessageBytes) {
      // Over the limit: what was spooled of it beyond its first headerKeepBytes is given back.
      c.oversize = true;
      await this.flush();
      const keepEnd = c.offset + Math.min(c.stored, EXPORT_LIMITS.headerKeepBytes);
      await this.messages.truncate(keepEnd);
      this.position = this.written = keepEnd;
      c.stored = keepEnd - c.offset;
    }
    let keep = chunk;
    if (c.oversize) {
      // Past the limit: only what is still missing of the first headerKeepBytes is kept.
      const room = Math.max(0, EXPORT_LIMITS.headerKeepBytes - c.stored);
      if (room === 0) return;
      keep = chunk.subarray(0, room);
    }
    c.stored += keep.length;
    this.pending.push(keep);
    this.pendingBytes += keep.length;
    this.position += keep.length;
    if (this.pendingBytes >= FLUSH_BYTES) await this.flush();
  }

  async end(): Promise<void> {
    const c = this.current;
    this.current = undefined;
    if (!c) return;
    this.count++;
    if (c.oversize) this.oversize++;
    this.folders[c.folder].messages++;
    this.records.push(encodeRecord(c));
    if (this.records.length >= 1024) await this.flushIndex();
  }

  private async flush(): Promise<void> {
    if (this.pendingBytes === 0) return;
    const data = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    await this.messages.write(data, 0, data.length, this.written);
    this.written += data.length;
  }

  private async flushIndex(): Promise<void> {
    if (this.records.length === 0) return;
    const data = Buffer.concat(this.records);
    this.records = [];
    await this.index.write(data);
  }

  async close(): Promise<void> {
    try {
      await this.flush();
      await this.flushIndex();
      await this.messages.sync();
      await this.index.sync();
    } finally {
      await this.messages.close();
      await this.index.close();
    }
  }

  async abandon(): Promise<void> {
    await Promise.allSettled([this.messages.close(), this.index.close()]);
  }
}
