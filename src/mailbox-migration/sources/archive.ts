// Reading an uploaded export file: a zip holding mbox files, .eml files or a Maildir tree, or a bare
// mbox. The reader streams: entries are read one at a time through unzipper's central directory,
// mbox files are split line by line as they stream, and each message is appended to one spool file
// (`messages`) with a fixed-size record in `index` (spool.ts: folder, offset, stored length, real size, date,
// flags). Nothing is ever written under an entry's own name. The file source (file-source.ts) serves
// the scan and the copy from the spool.
//
// Refused before a message is kept: names with `..`, absolute paths, drive letters or backslashes;
// more than EXPORT_LIMITS.maxEntries entries; more than maxTotalBytes uncompressed; an entry that
// inflates more than maxRatio times its compressed size (or more than it declares: a zip bomb with a
// lying header); encrypted or unsupported entries; a damaged or truncated zip. Nested archives are
// not opened (they are listed as ignored). A message over SVC_MIGRATION_MAX_MESSAGE_BYTES keeps only
// its header block (the plan then skips it as too large, like a large message in a mailbox).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { specialUse } from 'imapflow/lib/special-use.js';
import type { CentralDirectory, File as ZipEntry } from 'unzipper';
import type { PartsFile } from './parts-file.js';
import {
  type ContentKind,
  EXPORT_LIMITS,
  type ExportKind,
  type ExportManifest,
  ExportRefused,
  FLAGS_FROM_HEADERS,
  Meter,
  type ProgressListener,
  Spool,
} from './spool.js';

const FROM_ = Buffer.from('From ');
const LONG_LINE = 64 * 1024;

function isFromLine(buf: Buffer, at: number, end: number): boolean {
  return end - at >= 5 && buf[at] === 0x46 && buf.compare(FROM_, 0, 5, at, at + 5) === 0;
}

/** `>From `, `>>From `, …: mboxrd (and mboxo) escaping of a body line that began with "From ". */
function isEscapedFrom(buf: Buffer, at: number, end: number): boolean {
  if (buf[at] !== 0x3e) return false;
  let i = at;
  while (i < end && buf[i] === 0x3e) i++;
  return isFromLine(buf, i, end);
}

/** The date of an mbox separator line ("From sender Mon Jan  1 00:00:00 2024"), or null. */
export function fromLineDate(line: string): Date | null {
  const rest = line.replace(/^From \S*\s+/, '').trim();
  // Without a year the parse would guess one: such a date is not used.
  if (!rest || !/\b\d{4}\b/.test(rest)) return null;
  const t = Date.parse(rest.includes('+') || rest.includes('-') || /GMT|UTC/.test(rest) ? rest : `${rest} UTC`);
  return Number.isNaN(t) ? null : new Date(t);
}

/**
 * Splits an mbox stream into messages: a message starts at a "From " line at the start of the file
 * or after a blank line; that blank line belongs to the separator. Lines of `>`s before "From "
 * lose one `>` (mboxrd; for mboxo this turns ">From " back into "From ", its usual reading).
 */
export async function splitMbox(chunks: AsyncIterable<Buffer>, spool: Spool, folder: number): Promise<void> {
  let carry: Buffer | undefined;
  let started = false;
  let atLineStart = true;
  let blank: Buffer | undefined;
  const beginAt = async (line: string) => {
    if (started) await spool.end();
    spool.begin(folder, fromLineDate(line), FLAGS_FROM_HEADERS);
    started = true;
  };
  const handle = async (buf: Buffer, final: boolean) => {
    let pos = 0;
    let run = 0;
    const emit = async (from: number, to: number) => {
      if (to > from && started) await spool.write(buf.subarray(from, to));
    };
    while (pos < buf.length) {
      if (!atLineStart) {
        const nl = buf.indexOf(10, pos);
        if (nl === -1) {
          await emit(run, buf.length);
          return undefined;
        }
        pos = nl + 1;
        atLineStart = true;
        continue;
      }
      const nl = buf.indexOf(10, pos);
      if (nl === -1 && !final && buf.length - pos < LONG_LINE) {
        await emit(run, pos);
        return buf.subarray(pos);
      }
      const end = nl === -1 ? buf.length : nl + 1;
      const length = end - pos;
      const isBlank = nl !== -1 && (length === 1 || (length === 2 && buf[pos] === 13));
      if (blank) {
        // A blank line followed by "From ": the next message. Otherwise the blank line was content.
        if (isFromLine(buf, pos, end)) {
          await emit(run, pos);
          blank = undefined;
          await beginAt(buf.toString('latin1', pos, Math.min(end, pos + 400)).trimEnd());
          run = end;
          pos = end;
          continue;
        }
        if (started) await spool.write(blank);
        blank = undefined;
      }
      if (!started && isFromLine(buf, pos, end)) {
        await beginAt(buf.toString('latin1', pos, Math.min(end, pos + 400)).trimEnd());
        run = end;
      } else if (isBlank) {
        await emit(run, pos);
        blank = Buffer.from(buf.subarray(pos, end));
        run = end;
      } else if (isEscapedFrom(buf, pos, end)) {
        await emit(run, pos);
        await emit(pos + 1, end);
        run = end;
      }
      pos = end;
      atLineStart = nl !== -1;
    }
    await emit(run, buf.length);
    return undefined;
  };
  for await (const chunk of chunks) {
    const buf = carry ? Buffer.concat([carry, chunk]) : chunk;
    carry = await handle(buf, false);
    if (carry) carry = Buffer.from(carry);
  }
  if (carry) await handle(carry, true);
  // A blank line at the very end is the last separator's, not the message's.
  if (started) await spool.end();
}

/** Why a zip entry name is refused, or undefined when it is a plain relative path. */
export function unsafeName(name: string): string | undefined {
  if (name.includes('\\')) return 'it contains a backslash';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'it is an absolute path';
  if (/[\u0000-\u001f]/.test(name)) return 'it contains control characters';
  if (name.split('/').some((s) => s === '..')) return 'it contains ..';
  if (name.length > 1024) return 'it is longer than 1024 characters';
  return undefined;
}

const NESTED = /\.(zip|jar|gz|tgz|tar|bz2|tbz2?|xz|txz|7z|rar|zst|z|lz|lzma|cab|iso|dmg)$/i;
const JUNK = /(^|\/)(__MACOSX\/|\.DS_Store$|Thumbs\.db$|desktop\.ini$)/i;
const MAILDIR_META = /(^|\/)(dovecot[^/]*|maildirfolder|maildirsize|courierimap[^/]*|subscriptions|\.uidvalidity|\.subscriptions)$/i;

function folderSpecialUse(folder: string): string | null {
  if (folder.toUpperCase() === 'INBOX') return '\\Inbox';
  const name = folder.split('/').pop() ?? folder;
  const guessed = specialUse(false, { name, flags: new Set<string>() } as never) as { flag?: string } | undefined;
  return guessed?.flag || null;
}

/** Maildir flags from a file name's ":2," suffix. */
export function maildirFlags(name: string): number {
  const m = /:2,([A-Za-z]*)$/.exec(name);
  if (!m) return 0;
  let bits = 0;
  for (const c of m[1]) {
    if (c === 'S') bits |= 1;
    else if (c === 'R') bits |= 2;
    else if (c === 'F') bits |= 4;
    else if (c === 'D') bits |= 8;
    else if (c === 'T') bits |= 16;
  }
  return bits;
}

/** The delivery time a Maildir file name starts with (seconds since 1970), or null. */
function maildirDate(name: string): Date | null {
  const m = /^(\d{9,11})\./.exec(name);
  return m ? new Date(Number(m[1]) * 1000) : null;
}

type Plan =
  | { entry: ZipEntry; kind: 'mbox'; folder: string }
  | { entry: ZipEntry; kind: 'eml'; folder: string }
  | { entry: ZipEntry; kind: 'maildir'; folder: string; base: string };

/** Drops the directories all folders share (e.g. "Takeout/Mail/"), keeping at least one segment. */
function stripCommonDirs(paths: string[][]): number {
  if (paths.length === 0) return 0;
  let n = 0;
  for (;;) {
    const seg = paths[0][n];
    if (seg === undefined || paths.some((p) => p.length <= n + 1 || p[n] !== seg)) return n;
    n++;
  }
}

function plannedFolder(segments: string[]): string {
  const name = segments.join('/');
  return name === '' || name.toUpperCase() === 'INBOX' ? 'INBOX' : name;
}

/** Chunks of an entry, checked against its declared size, the ratio, the running total and its CRC. */
async function* entryChunks(entry: ZipEntry, budget: { total: number }): AsyncGenerator<Buffer> {
  const declared = entry.uncompressedSize;
  const limit = Math.max(declared, 0);
  const ratioCap = Math.max(EXPORT_LIMITS.ratioFloorBytes, entry.compressedSize * EXPORT_LIMITS.maxRatio);
  let seen = 0;
  let crc = 0;
  const stream = entry.stream();
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      seen += chunk.length;
      budget.total += chunk.length;
      if (seen > limit) throw new ExportRefused('compression_ratio', `${entry.path} inflates to more than the ${declared} bytes it declares (a zip bomb?)`);
      if (seen > ratioCap)
        throw new ExportRefused('compression_ratio', `${entry.path} inflates more than ${EXPORT_LIMITS.maxRatio} times its compressed size (a zip bomb?)`);
      if (budget.total > EXPORT_LIMITS.maxTotalBytes)
        throw new ExportRefused('too_large', `the export inflates to more than ${EXPORT_LIMITS.maxTotalBytes} bytes`);
      crc = zlib.crc32(chunk, crc);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof ExportRefused) throw error;
    throw new ExportRefused('damaged', `${entry.path} cannot be read: the zip archive is damaged or incomplete (${(error as Error).message})`);
  } finally {
    stream.destroy();
  }
  if (seen !== declared)
    throw new ExportRefused('damaged', `${entry.path} is ${seen} bytes where the archive says ${declared}: the zip archive is damaged or incomplete`);
  if (crc >>> 0 !== entry.crc32 >>> 0) throw new ExportRefused('damaged', `${entry.path} fails its checksum: the zip archive is damaged`);
}

const PK = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** Peeks at the first bytes of a stream and hands back a stream that still yields them. */
async function peek(chunks: AsyncIterable<Buffer>, bytes: number): Promise<{ head: Buffer; rest: AsyncIterable<Buffer>; close(): Promise<void> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  const taken: Buffer[] = [];
  let have = 0;
  let done = false;
  while (have < bytes) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    taken.push(next.value);
    have += next.value.length;
  }
  const head = Buffer.concat(taken);
  async function* rest() {
    if (head.length) yield head;
    if (done) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return {
    head: head.subarray(0, bytes),
    rest: rest(),
    close: async () => {
      await iterator.return?.();
    },
  };
}

/**
 * The entry count the zip's end-of-central-directory record declares (zip64 too), read before
 * unzipper lists the entries: a zip declaring millions of entries is refused without listing them.
 */
export async function declaredEntries(file: PartsFile): Promise<number> {
  const tailLength = Math.min(file.size, 22 + 0xffff);
  const tail = await file.read(file.size - tailLength, tailLength);
  const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd === -1 || eocd + 22 > tailLength)
    throw new ExportRefused('damaged', 'the zip archive is damaged or incomplete: its table of contents is missing (was the upload cut short?)');
  let entries = tail.readUInt16LE(eocd + 10);
  const locator = eocd - 20;
  if (locator >= 0 && tail.readUInt32LE(locator) === 0x07064b50) {
    const record = await file.read(Number(tail.readBigUInt64LE(locator + 8)), 56);
    if (record.length < 56 || record.readUInt32LE(0) !== 0x06064b50)
      throw new ExportRefused('damaged', 'the zip archive is damaged: its zip64 table of contents cannot be found');
    entries = Number(record.readBigUInt64LE(32));
  }
  return entries;
}

async function readZip(
  file: PartsFile,
  spool: Spool,
  meter: Meter,
  ignored: ExportManifest['ignored'],
  counts: { ignored: number; contents: Set<ContentKind> },
): Promise<void> {
  const declaredCount = await declaredEntries(file);
  if (declaredCount > EXPORT_LIMITS.maxEntries)
    throw new ExportRefused('too_many_entries', `the zip archive holds ${declaredCount} entries; at most ${EXPORT_LIMITS.maxEntries} are read`);
  let directory: CentralDirectory;
  try {
    // Loaded on first use, like imapflow: most servers never read an export file.
    const { default: unzipper } = await import('unzipper');
    directory = await unzipper.Open.custom({ size: async () => file.size, stream: (offset: number, length?: number) => file.stream(offset, length) } as never);
  } catch (error) {
    throw new ExportRefused('damaged', `the zip archive is damaged or incomplete: its table of contents cannot be read (${(error as Error).message ?? error})`);
  }
  const entries = directory.files;
  if (entries.length > EXPORT_LIMITS.maxEntries)
    throw new ExportRefused('too_many_entries', `the zip archive holds ${entries.length} entries; at most ${EXPORT_LIMITS.maxEntries} are read`);
  // Every name and size is checked before anything is read.
  let declared = 0;
  for (const e of entries) {
    const problem = unsafeName(e.path);
    if (problem)
      throw new ExportRefused(
        'unsafe_name',
        `the zip archive holds an entry named ${JSON.stringify(e.path.slice(0, 200))}, which is refused because ${problem}`,
      );
    if (e.flags & 1) throw new ExportRefused('encrypted', `${e.path} is encrypted; export the mailbox without a password`);
    if (e.compressionMethod !== 0 && e.compressionMethod !== 8)
      throw new ExportRefused('unsupported', `${e.path} uses compression method ${e.compressionMethod}; only stored and deflated entries are read`);
    declared += e.uncompressedSize;
    if (declared > EXPORT_LIMITS.maxTotalBytes)
      throw new ExportRefused('too_large', `the zip archive declares more than ${EXPORT_LIMITS.maxTotalBytes} uncompressed bytes`);
    if (e.uncompressedSize > EXPORT_LIMITS.ratioFloorBytes && e.uncompressedSize > e.compressedSize * EXPORT_LIMITS.maxRatio) {
      throw new ExportRefused(
        'compression_ratio',
        `${e.path} would inflate ${Math.round(e.uncompressedSize / Math.max(1, e.compressedSize))} times (at most ${EXPORT_LIMITS.maxRatio}); zip bombs are refused`,
      );
    }
  }
  const ignore = (name: string, reason: 'nested_archive' | 'not_mail') => {
    counts.ignored++;
    if (ignored.length < 100) ignored.push({ name, reason });
  };
  // What each entry is, and the folder it goes into.
  const plans: Plan[] = [];
  const maildirRoots = new Set<string>();
  for (const e of entries) {
    if (e.type === 'Directory' || e.path.endsWith('/')) continue;
    if (JUNK.test(e.path)) continue;
    const segments = e.path.split('/').filter((s) => s !== '' && s !== '.');
    const base = segments[segments.length - 1] ?? '';
    if (NESTED.test(base)) {
      ignore(e.path, 'nested_archive');
      continue;
    }
    const parent = segments[segments.length - 2];
    if (parent === 'cur' || parent === 'new' || parent === 'tmp') {
      if (parent === 'tmp' || MAILDIR_META.test(base)) continue;
      const root = segments.slice(0, -2).join('/');
      maildirRoots.add(root);
      plans.push({ entry: e, kind: 'maildir', folder: root, base });
      continue;
    }
    if (MAILDIR_META.test(base)) continue;
    if (/\.eml$/i.test(base)) plans.push({ entry: e, kind: 'eml', folder: segments.slice(0, -1).join('/') });
    else if (/\.(mbox|mbx)$/i.test(base) || !/\.[A-Za-z0-9]{1,5}$/.test(base))
      plans.push({
        entry: e,
        kind: 'mbox',
        folder: segments
          .join('/')
          .replace(/\.(mbox|mbx)$/i, '')
          .replace(/\.sbd\//gi, '/'),
      });
    else ignore(e.path, 'not_mail');
  }
  // Folder names: Maildir roots relative to the top one (Maildir++ ".Sent" → "Sent"); mbox and
  // .eml folders without the directories they all share.
  const roots = [...maildirRoots].sort((a, b) => a.length - b.length);
  const top = roots.find((r) => roots.every((o) => o === r || r === '' || o.startsWith(`${r}/`))) ?? null;
  const maildirName = (root: string) => {
    if (top !== null && root === top) return 'INBOX';
    const rel = top ? root.slice(top.length + 1) : root;
    const segments = rel.split('/').flatMap((s) => (s.startsWith('.') ? s.slice(1).split('.') : [s]));
    return plannedFolder(segments.filter((s, i) => s !== '' && !(i === 0 && s.toUpperCase() === 'INBOX' && segments.length > 1)));
  };
  const others = plans.filter((p) => p.kind !== 'maildir');
  const otherSegs = others.map((p) => (p.kind === 'eml' ? [...p.folder.split('/').filter(Boolean), ''] : p.folder.split('/').filter(Boolean)));
  const drop = stripCommonDirs(otherSegs);
  others.forEach((p, i) => {
    p.folder = plannedFolder(otherSegs[i].slice(drop).filter(Boolean));
  });
  for (const p of plans) if (p.kind === 'maildir') p.folder = maildirName(p.folder);

  const budget = { total: 0 };
  meter.totalBytes = plans.reduce((sum, p) => sum + p.entry.uncompressedSize, 0);
  for (const p of plans) {
    const { head, rest, close } = await peek(meter.count(entryChunks(p.entry, budget)), 4);
    if (head.equals(PK)) {
      // A zip inside the zip is not opened, whatever its name.
      ignore(p.entry.path, 'nested_archive');
      await close();
      continue;
    }
    if (p.kind === 'mbox' && !head.equals(FROM_.subarray(0, 4))) {
      if (head.length > 0) ignore(p.entry.path, 'not_mail');
      await close();
      continue;
    }
    const folder = spool.folderNumber(p.folder, folderSpecialUse(p.folder));
    if (p.kind === 'mbox') {
      counts.contents.add('mbox');
      await splitMbox(rest, spool, folder);
      continue;
    }
    counts.contents.add(p.kind);
    const date = p.kind === 'maildir' ? (maildirDate(p.base) ?? p.entry.lastModifiedDateTime ?? null) : (p.entry.lastModifiedDateTime ?? null);
    spool.begin(folder, date && !Number.isNaN(date.getTime()) ? date : null, p.kind === 'maildir' ? maildirFlags(p.base) : 0);
    for await (const chunk of rest) await spool.write(chunk);
    await spool.end();
  }
}

/**
 * Reads the uploaded file (its parts, in order) into `dir` (spool, index, manifest.json). Throws
 * ExportRefused when the file is not an export this server reads, or is unsafe to read.
 */
export async function readExport(
  file: PartsFile,
  dir: string,
  opts: { maxMessageBytes: number; bytes: number; sha256: string; now: Date; onProgress?: ProgressListener },
): Promise<ExportManifest> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const head = await file.read(0, 5);
  const headBytes = head.length;
  const spool = await Spool.open(dir, opts.maxMessageBytes);
  const meter = new Meter(spool, opts.onProgress);
  const ignored: ExportManifest['ignored'] = [];
  const counts = { ignored: 0, contents: new Set<ContentKind>() };
  let kind: ExportKind;
  try {
    if (headBytes >= 4 && (head.subarray(0, 4).equals(PK) || (head[0] === 0x50 && head[1] === 0x4b && head[2] === 5 && head[3] === 6))) {
      kind = 'zip';
      await readZip(file, spool, meter, ignored, counts);
    } else if (headBytes === 5 && head.equals(FROM_)) {
      kind = 'mbox';
      counts.contents.add('mbox');
      meter.totalBytes = file.size;
      await splitMbox(meter.count(file.chunks()), spool, spool.folderNumber('INBOX', '\\Inbox'));
    } else {
      throw new ExportRefused('not_an_export', 'the file is neither a zip archive nor an mbox file (an mbox starts with a "From " line)');
    }
    if (spool.count === 0) throw new ExportRefused('empty', 'the export holds no messages (mbox files, .eml files or a Maildir tree)');
    await spool.close();
  } catch (error) {
    await spool.abandon();
    throw error;
  }
  const manifest: ExportManifest = {
    version: 1,
    kind,
    contents: [...counts.contents].sort(),
    bytes: opts.bytes,
    sha256: opts.sha256,
    messages: spool.count,
    oversize: spool.oversize,
    folders: spool.folders,
    ignored,
    ignored_count: counts.ignored,
    read_at: opts.now.toISOString(),
  };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest), { mode: 0o600 });
  return manifest;
}
