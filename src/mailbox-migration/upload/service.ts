// Export-file uploads of a migration: parts of at most 8 MiB, each with its SHA-256 in the
// X-Part-SHA256 header, kept under $SVC_DATA_DIR/migration-uploads/<migration id>/ (never under a
// name from the request); GET …/upload lists the parts held so a cut upload resumes; complete
// assembles the parts into one file, reads it (archive.ts) into the message spool the file source
// serves, and moves the migration to connected. What is kept there goes when the migration is
// deleted, cancelled, completed or removed, and with its workspace (the sweeper below also runs
// hourly with the retention job, for anything a crash left behind).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Access } from '../../auth/access.js';
import type { Ctx } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { announceEvents } from '../../events/service.js';
import { AppError, conflict, invalid, tooLarge } from '../../platform/errors.js';
import { randomText } from '../../platform/ids.js';
import type { RetentionRule, WorkspaceDataStep } from '../../platform/lifecycle.js';
import { workspacesDeletedAt } from '../../workspaces/live.js';
import { formatMigration } from '../format.js';
import { type ExportManifest, ExportRefused, readExport } from '../sources/archive.js';
import { SourceError } from '../sources/connect.js';
import { FileMailbox } from '../sources/file.js';
import { ENDED_STATES, requireAction, stateError } from '../states.js';
import { actorOf, getMigration, loadProgress, lockMigration, logActivity, type MigrationRow, recordMigrationUpdated, saveMigration } from '../store.js';

/** The request header carrying a part's SHA-256 (64 hex digits). */
export const PART_SHA256_HEADER = 'X-Part-SHA256';
/** Spec, Limits: "Migration: upload part size — 8 MiB at most". */
export const MAX_PART_BYTES = 8 * 1024 * 1024;
export const MAX_PARTS = 10_000;
/** All parts of one upload together. */
export const MAX_UPLOAD_BYTES = 64 * 1024 ** 3;

const SHA256 = /^[0-9a-f]{64}$/;
const PART_FILE = /^(\d{6})\.([0-9a-f]{64})$/;

export function uploadRoot(dataDir: string): string {
  return path.join(dataDir, 'migration-uploads');
}

function dirs(ctx: Pick<Ctx, 'config'>, migrationId: string) {
  if (!/^mig_[A-Za-z0-9]+$/.test(migrationId)) throw new Error(`not a migration id: ${migrationId}`);
  const root = path.join(uploadRoot(ctx.config.dataDir), migrationId);
  return { root, parts: path.join(root, 'parts'), tmp: path.join(root, 'tmp'), file: path.join(root, 'file'), read: path.join(root, 'read') };
}

export interface HeldPart {
  part: number;
  size: number;
  sha256: string;
}

function heldParts(partsDir: string): HeldPart[] {
  let names: string[];
  try {
    names = fs.readdirSync(partsDir);
  } catch {
    return [];
  }
  const out: HeldPart[] = [];
  for (const name of names) {
    const m = PART_FILE.exec(name);
    if (!m) continue;
    out.push({ part: Number(m[1]), size: fs.statSync(path.join(partsDir, name)).size, sha256: m[2] });
  }
  return out.sort((a, b) => a.part - b.part);
}

function readManifest(readDir: string): ExportManifest | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(readDir, 'manifest.json'), 'utf8')) as ExportManifest;
  } catch {
    return null;
  }
}

/** Uploads being assembled and read now, per server (one process serves the API): parts wait for them. */
const completing = new WeakMap<object, Set<string>>();

function busyOf(ctx: Pick<Ctx, 'db'>): Set<string> {
  let set = completing.get(ctx.db);
  if (!set) completing.set(ctx.db, (set = new Set()));
  return set;
}

function uploadable(ctx: Pick<Ctx, 'db'>, m: MigrationRow): void {
  requireAction(m, 'upload');
  if (busyOf(ctx).has(m.id)) throw conflict('the upload is being completed; wait for its answer', 'conflict');
}

/** Stores one part (replacing a part of the same number); nothing is kept unless size and SHA-256 match. */
export async function putPart(
  ctx: Ctx,
  access: Access,
  id: string,
  input: { part: number; sha256: string | undefined; contentLength: number | undefined; data: Readable },
): Promise<HeldPart> {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  uploadable(ctx, m);
  if (!Number.isInteger(input.part) || input.part < 1 || input.part > MAX_PARTS) throw invalid(`part must be a number from 1 to ${MAX_PARTS}`);
  const expected = input.sha256?.trim().toLowerCase();
  if (!expected || !SHA256.test(expected)) throw invalid(`send the part's SHA-256 as 64 hex digits in the ${PART_SHA256_HEADER} header`);
  if (input.contentLength !== undefined && input.contentLength > MAX_PART_BYTES) throw tooLarge(`a part is at most ${MAX_PART_BYTES} bytes (8 MiB)`);
  const d = dirs(ctx, m.id);
  fs.mkdirSync(d.parts, { recursive: true, mode: 0o700 });
  fs.mkdirSync(d.tmp, { recursive: true, mode: 0o700 });
  const tmp = path.join(d.tmp, `part-${randomText(12)}`);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > MAX_PART_BYTES) return done(tooLarge(`a part is at most ${MAX_PART_BYTES} bytes (8 MiB)`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(input.data, meter, fs.createWriteStream(tmp, { mode: 0o600 }));
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    if (error instanceof AppError) throw error;
    throw invalid(`the part was not received whole (${(error as Error).message})`);
  }
  const received = hash.digest('hex');
  try {
    if (size === 0) throw invalid('the part is empty');
    if (received !== expected)
      throw invalid(
        `part ${input.part} does not match its ${PART_SHA256_HEADER} (received data hashes to ${received}); nothing was kept, send the part again`,
        { part: input.part, expected_sha256: expected, received_sha256: received },
      );
    const others = heldParts(d.parts).filter((p) => p.part !== input.part);
    const total = others.reduce((s, p) => s + p.size, 0) + size;
    if (total > MAX_UPLOAD_BYTES) throw tooLarge(`an export file is at most ${MAX_UPLOAD_BYTES} bytes`);
    // The migration may have been cancelled or deleted while the part streamed in.
    const current = await getMigration(ctx.db, access.workspaceId, id);
    uploadable(ctx, current);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
  const name = `${String(input.part).padStart(6, '0')}.${received}`;
  fs.renameSync(tmp, path.join(d.parts, name));
  for (const old of fs.readdirSync(d.parts)) {
    if (old !== name && old.startsWith(`${String(input.part).padStart(6, '0')}.`)) fs.rmSync(path.join(d.parts, old), { force: true });
  }
  return { part: input.part, size, sha256: received };
}

function missingParts(parts: HeldPart[], expected?: number): number[] {
  const have = new Set(parts.map((p) => p.part));
  const last = Math.max(expected ?? 0, ...parts.map((p) => p.part));
  const missing: number[] = [];
  for (let n = 1; n <= last && missing.length < 1000; n++) if (!have.has(n)) missing.push(n);
  return missing;
}

function fileView(manifest: ExportManifest | null) {
  if (!manifest) return null;
  return {
    kind: manifest.kind,
    contents: manifest.contents,
    bytes: manifest.bytes,
    sha256: manifest.sha256,
    messages: manifest.messages,
    oversize_messages: manifest.oversize,
    folders: manifest.folders.map((f) => ({ path: f.path, special_use: f.specialUse, messages: f.messages })),
    ignored: manifest.ignored,
    ignored_count: manifest.ignored_count,
    read_at: manifest.read_at,
  };
}

/** The parts held (to resume a cut upload) and, once completed, what was read from the file. */
export async function getUpload(ctx: Ctx, access: Access, id: string) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  const d = dirs(ctx, m.id);
  const parts = heldParts(d.parts);
  return {
    data: parts,
    next_cursor: null,
    total_bytes: parts.reduce((s, p) => s + p.size, 0),
    missing_parts: missingParts(parts),
    max_part_bytes: MAX_PART_BYTES,
    sha256_header: PART_SHA256_HEADER,
    completing: busyOf(ctx).has(m.id),
    file: fileView(readManifest(d.read)),
  };
}

async function assemble(parts: HeldPart[], partsDir: string, target: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const out = fs.createWriteStream(target, { mode: 0o600 });
  async function* chunks() {
    for (const p of parts) {
      for await (const chunk of fs.createReadStream(path.join(partsDir, `${String(p.part).padStart(6, '0')}.${p.sha256}`), { highWaterMark: 1024 * 1024 })) {
        hash.update(chunk as Buffer);
        bytes += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
    }
  }
  await pipeline(chunks, out);
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Assembles the parts (1…n, none missing) and reads the file. A file that is not an export, or is
 * unsafe to read, is refused (400 with `reason`) and everything of the upload is discarded; the
 * migration stays a draft. On success the migration is connected.
 */
export async function completeUpload(ctx: Ctx, access: Access, id: string, input: { parts?: number; sha256?: string }) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  uploadable(ctx, m);
  const wanted = input.sha256?.trim().toLowerCase();
  if (wanted !== undefined && !SHA256.test(wanted)) throw invalid('sha256 must be 64 hex digits');
  const busy = busyOf(ctx);
  busy.add(m.id);
  const d = dirs(ctx, m.id);
  const readTmp = path.join(d.tmp, `read-${randomText(12)}`);
  try {
    // What an interrupted completion left (a crash while reading) goes first.
    for (const old of fs.existsSync(d.tmp) ? fs.readdirSync(d.tmp) : [])
      if (old.startsWith('read-')) fs.rmSync(path.join(d.tmp, old), { recursive: true, force: true });
    const parts = heldParts(d.parts);
    if (parts.length === 0) throw conflict('no part has been uploaded; POST /v1/migrations/{id}/upload/parts/1 first', 'conflict');
    const missing = missingParts(parts, input.parts);
    if (missing.length)
      throw conflict(`parts ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', …' : ''} are missing; upload them, then complete again`, 'conflict', {
        missing_parts: missing,
      });
    if (input.parts !== undefined && parts.length !== input.parts)
      throw conflict(`${parts.length} parts are held, not ${input.parts}`, 'conflict', { missing_parts: [] });
    fs.mkdirSync(d.tmp, { recursive: true, mode: 0o700 });
    const assembled = await assemble(parts, d.parts, d.file);
    if (wanted && assembled.sha256 !== wanted) {
      fs.rmSync(d.file, { force: true });
      throw invalid(
        `the assembled file hashes to ${assembled.sha256}, not ${wanted}; check the parts (GET /v1/migrations/{id}/upload) and send the wrong ones again`,
        { reason: 'sha256_mismatch', received_sha256: assembled.sha256 },
      );
    }
    let manifest: ExportManifest;
    try {
      manifest = await readExport(d.file, readTmp, {
        maxMessageBytes: ctx.config.migration.maxMessageBytes,
        bytes: assembled.bytes,
        sha256: assembled.sha256,
        now: ctx.clock.now(),
      });
    } catch (error) {
      fs.rmSync(readTmp, { recursive: true, force: true });
      if (!(error instanceof ExportRefused)) throw error;
      // Refused: nothing of it is kept; the next upload starts from part 1.
      fs.rmSync(d.root, { recursive: true, force: true });
      ctx.log.warn('migration export file refused', { migration_id: m.id, reason: error.reason });
      await inTransaction(ctx.db, async (trx) => {
        await logActivity({ db: trx, clock: ctx.clock }, m, actorOf(access), 'upload_refused', {
          reason: error.reason,
          message: error.message,
          bytes: assembled.bytes,
        });
      });
      throw invalid(`the export file was refused: ${error.message}. Nothing of it was kept; upload a new file from part 1`, { reason: error.reason });
    }
    fs.rmSync(d.read, { recursive: true, force: true });
    fs.renameSync(readTmp, d.read);
    const saved = await inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      const current = await lockMigration(trx, m.id);
      if (!current || current.deleted_at || current.state !== 'draft') throw stateError(current ?? m, 'upload');
      const next = await saveMigration(tx, current, { state: 'connected' });
      await logActivity(tx, next, actorOf(access), 'upload_completed', {
        kind: manifest.kind,
        contents: manifest.contents,
        bytes: manifest.bytes,
        sha256: manifest.sha256,
        messages: manifest.messages,
        folders: manifest.folders.length,
        oversize: manifest.oversize,
        ignored: manifest.ignored_count,
      });
      await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(trx, next.id)) });
      return next;
    });
    announceEvents(ctx);
    // The spool holds every message now: the parts and the assembled file are not needed any more.
    fs.rmSync(d.parts, { recursive: true, force: true });
    fs.rmSync(d.file, { force: true });
    ctx.log.info('migration export file read', { migration_id: m.id, kind: manifest.kind, bytes: manifest.bytes, messages: manifest.messages });
    return { migration: formatMigration(saved, await loadProgress(ctx.db, saved.id)), file: fileView(manifest)! };
  } catch (error) {
    fs.rmSync(readTmp, { recursive: true, force: true });
    throw error;
  } finally {
    busy.delete(m.id);
  }
}

/** The export file of a migration as a mail source for the scan and the copy. */
export async function openFileSource(ctx: Pick<Ctx, 'config'>, m: Pick<MigrationRow, 'id'>): Promise<FileMailbox> {
  const d = dirs(ctx, m.id);
  if (!readManifest(d.read))
    throw new SourceError('connect', 'the export file of this migration is no longer on the server; create a new migration and upload it again');
  return FileMailbox.open(d.read);
}

/** Removes everything uploaded for a migration (parts, assembled file, read spool). */
export function discardUpload(ctx: Pick<Ctx, 'config'>, migrationId: string): void {
  fs.rmSync(dirs(ctx, migrationId).root, { recursive: true, force: true });
}

const DONE_STATES = new Set([...ENDED_STATES]);

/**
 * Hourly, with the retention job: uploads whose migration is gone, deleted, ended (completed,
 * cancelled, removing, removed) or whose workspace was deleted. Anything a crash left behind after
 * a delete or cancel goes here.
 */
export const migrationUploadsRule: RetentionRule = {
  name: 'migration_uploads',
  async deleteBatch(ctx, _now, batch) {
    let names: string[];
    try {
      names = fs.readdirSync(uploadRoot(ctx.config.dataDir)).filter((n) => /^mig_[A-Za-z0-9]+$/.test(n));
    } catch {
      return 0;
    }
    let removed = 0;
    for (let i = 0; i < names.length && removed < batch; i += 200) {
      const chunk = names.slice(i, i + 200);
      const rows = await ctx.db.selectFrom('mailbox_migrations').select(['id', 'state', 'deleted_at', 'workspace_id']).where('id', 'in', chunk).execute();
      const workspaceDeleted = await workspacesDeletedAt(
        ctx.db,
        rows.map((r) => r.workspace_id),
      );
      const byId = new Map(rows.map((r) => [r.id, { ...r, workspace_deleted_at: workspaceDeleted.get(r.workspace_id) ?? null }]));
      for (const name of chunk) {
        if (removed >= batch) break;
        const r = byId.get(name);
        if (r && !r.deleted_at && !r.workspace_deleted_at && !DONE_STATES.has(r.state)) {
          // Read already (a crash after the migration was connected, before the parts went): only the spool is needed.
          if (r.state !== 'draft') {
            const d = dirs(ctx, name);
            for (const p of [d.parts, d.file, d.tmp]) fs.rmSync(p, { recursive: true, force: true });
          }
          continue;
        }
        discardUpload(ctx, name);
        removed++;
      }
    }
    return removed;
  },
};

/** A deleted workspace's uploads (run before its migration rows go). */
export const migrationUploadsWorkspaceStep: WorkspaceDataStep = {
  name: 'migration_uploads',
  async deleteBatch(ctx, workspaceId, batch) {
    const ids = (await ctx.db.selectFrom('mailbox_migrations').select('id').where('workspace_id', '=', workspaceId).execute()).map((r) => r.id);
    let removed = 0;
    for (const id of ids) {
      if (removed >= batch) break;
      if (!fs.existsSync(dirs(ctx, id).root)) continue;
      discardUpload(ctx, id);
      removed++;
    }
    return { rows: removed, files: removed };
  },
};
