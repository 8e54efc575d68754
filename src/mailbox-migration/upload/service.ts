// Export-file uploads of a migration: parts of at most 8 MiB, each with its SHA-256 in the
// X-Part-SHA256 header, kept under $SVC_DATA_DIR/migration-uploads/<migration id>/ (never under a
// name from the request); GET …/upload lists the parts held so a cut upload resumes. `complete`
// checks that every part is there, stores the upload as processing with its job (processing.ts
// verifies the whole file's SHA-256 and reads it into the message spool the file source serves,
// then moves the migration to connected) and answers at once; GET …/upload and migration.progress
// events show how far it is, and a refused file's cause. What is kept there goes when the
// migration is deleted, cancelled, completed or removed, and with its workspace (the sweeper below
// also runs hourly with the retention job, for anything a crash left behind).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import type { Access } from '../../auth/access.js';
import type { Ctx } from '../../context.js';
import type { Db, MailboxMigrationUploadsTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { announceEvents, recordEvent } from '../../events/service.js';
import { iso } from '../../platform/clock.js';
import { AppError, conflict, invalid, tooLarge } from '../../platform/errors.js';
import { randomText } from '../../platform/ids.js';
import { enqueue } from '../../platform/jobs.js';
import type { RetentionRule, WorkspaceDataStep } from '../../platform/lifecycle.js';
import { pipeToNewFile } from '../../platform/storage.js';
import { workspacesDeletedAt } from '../../workspaces/live.js';
import { formatMigration } from '../format.js';
import { SourceError } from '../sources/connect.js';
import { FileMailbox } from '../sources/file.js';
import type { ExportManifest } from '../sources/spool.js';
import { ENDED_STATES, requireAction, stateError } from '../states.js';
import { actorOf, getMigration, loadProgress, lockMigration, type MigrationRow, type Tx } from '../store.js';

/** The request header carrying a part's SHA-256 (64 hex digits). */
export const PART_SHA256_HEADER = 'X-Part-SHA256';
/** Spec, Limits: "Migration: upload part size — 8 MiB at most". */
export const MAX_PART_BYTES = 8 * 1024 * 1024;
export const MAX_PARTS = 10_000;
/** All parts of one upload together. */
export const MAX_UPLOAD_BYTES = 64 * 1024 ** 3;
/** The job that verifies and reads a completed upload (one per migration: uploadJobKey). */
export const UPLOAD_JOB = 'migration.upload';

export function uploadJobKey(migrationId: string): string {
  return `migration-upload:${migrationId}`;
}

const SHA256 = /^[0-9a-f]{64}$/;
const PART_FILE = /^(\d{6})\.([0-9a-f]{64})$/;

export function uploadRoot(dataDir: string): string {
  return path.join(dataDir, 'migration-uploads');
}

export function uploadDirs(ctx: Pick<Ctx, 'config'>, migrationId: string) {
  if (!/^mig_[A-Za-z0-9]+$/.test(migrationId)) throw new Error(`not a migration id: ${migrationId}`);
  const root = path.join(uploadRoot(ctx.config.dataDir), migrationId);
  return { root, parts: path.join(root, 'parts'), tmp: path.join(root, 'tmp'), read: path.join(root, 'read') };
}

export interface HeldPart {
  part: number;
  size: number;
  sha256: string;
}

export function partFileName(p: Pick<HeldPart, 'part' | 'sha256'>): string {
  return `${String(p.part).padStart(6, '0')}.${p.sha256}`;
}

export function heldParts(partsDir: string): HeldPart[] {
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

export function readManifest(readDir: string): ExportManifest | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(readDir, 'manifest.json'), 'utf8')) as ExportManifest;
  } catch {
    return null;
  }
}

export type UploadRow = MailboxMigrationUploadsTable;

export async function findUploadRow(db: Db, migrationId: string): Promise<UploadRow | undefined> {
  return db.selectFrom('mailbox_migration_uploads').selectAll().where('migration_id', '=', migrationId).executeTakeFirst();
}

/** Parts are taken only while nothing is being processed (and not once the file was read). */
async function uploadable(ctx: Pick<Ctx, 'db'>, m: MigrationRow): Promise<void> {
  requireAction(m, 'upload');
  const row = await findUploadRow(ctx.db, m.id);
  if (row?.state === 'processing') throw conflict('the uploaded file is being processed; follow its progress with GET /v1/migrations/{id}/upload', 'conflict');
}

/** Stores one part (replacing a part of the same number); nothing is kept unless size and SHA-256 match. */
export async function putPart(
  ctx: Ctx,
  access: Access,
  id: string,
  input: { part: number; sha256: string | undefined; contentLength: number | undefined; data: Readable },
): Promise<HeldPart> {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  await uploadable(ctx, m);
  if (!Number.isInteger(input.part) || input.part < 1 || input.part > MAX_PARTS) throw invalid(`part must be a number from 1 to ${MAX_PARTS}`);
  const expected = input.sha256?.trim().toLowerCase();
  if (!expected || !SHA256.test(expected)) throw invalid(`send the part's SHA-256 as 64 hex digits in the ${PART_SHA256_HEADER} header`);
  if (input.contentLength !== undefined && input.contentLength > MAX_PART_BYTES) throw tooLarge(`a part is at most ${MAX_PART_BYTES} bytes (8 MiB)`);
  const d = uploadDirs(ctx, m.id);
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
    await pipeToNewFile(input.data, meter, tmp);
  } catch (error) {
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
    // The migration may have been cancelled or deleted, or the upload completed, while the part streamed in.
    const current = await getMigration(ctx.db, access.workspaceId, id);
    await uploadable(ctx, current);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
  const name = partFileName({ part: input.part, sha256: received });
  fs.renameSync(tmp, path.join(d.parts, name));
  for (const old of fs.readdirSync(d.parts)) {
    if (old !== name && old.startsWith(`${String(input.part).padStart(6, '0')}.`)) fs.rmSync(path.join(d.parts, old), { force: true });
  }
  // A new upload after a refused file: the refusal is history now (the activity log keeps it).
  await ctx.db.deleteFrom('mailbox_migration_uploads').where('migration_id', '=', m.id).where('state', '=', 'failed').execute();
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

/** Where the processing of a completed upload is (the `processing` field and migration.progress events). */
export function processingView(row: UploadRow) {
  const total = Number(row.total_bytes);
  const done = Number(row.done_bytes);
  return {
    state: row.state,
    phase: row.phase,
    done_bytes: done,
    total_bytes: total,
    percent: row.state === 'read' ? 100 : total > 0 ? Math.min(100, Math.floor((done * 100) / total)) : 0,
    messages: row.messages,
    started_at: row.started_at,
    finished_at: row.finished_at,
    error:
      row.state === 'failed'
        ? { code: 'invalid_request' as const, reason: row.error_reason ?? 'unreadable', message: row.error_message ?? 'the export file could not be read' }
        : null,
  };
}

/** Records migration.progress for an upload being processed (owners and admins only, never webhooks). */
export async function recordUploadProgress(tx: Tx, m: Pick<MigrationRow, 'id' | 'workspace_id' | 'state'>, row: UploadRow): Promise<void> {
  await recordEvent(tx, {
    workspaceId: m.workspace_id,
    type: 'migration.progress',
    occurredAt: tx.clock.now(),
    data: { migration_id: m.id, state: m.state, upload: processingView(row) },
    webhook: false,
  });
}

/**
 * The parts held (to resume a cut upload), the upload's state (`receiving` parts, `processing`
 * after complete, `read`, or `failed` with the cause) and, once read, what was read from the file.
 */
export async function getUpload(ctx: Ctx, access: Access, id: string) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  return uploadView(ctx, m);
}

async function uploadView(ctx: Pick<Ctx, 'db' | 'config'>, m: MigrationRow) {
  const d = uploadDirs(ctx, m.id);
  const parts = heldParts(d.parts);
  const row = await findUploadRow(ctx.db, m.id);
  const manifest = readManifest(d.read);
  // A migration read before uploads had a row (or moved on since) still shows as read.
  const state: UploadRow['state'] | 'receiving' = row?.state ?? (manifest ? 'read' : 'receiving');
  return {
    state,
    data: parts,
    next_cursor: null,
    total_bytes: parts.reduce((s, p) => s + p.size, 0),
    missing_parts: missingParts(parts),
    max_part_bytes: MAX_PART_BYTES,
    sha256_header: PART_SHA256_HEADER,
    completing: state === 'processing',
    processing: row ? processingView(row) : null,
    file: fileView(manifest),
  };
}

/**
 * Checks that parts 1…n are all held, then stores the upload as processing and its job, and
 * answers at once (202): the job verifies the file's SHA-256 and reads it (processing.ts). A file
 * that is not an export, is unsafe to read, or does not match `sha256` ends `failed` with the
 * cause (`reason`) in GET …/upload, and nothing of it is kept; the migration stays a draft. Asking
 * again while it is processing answers the same upload (when `parts` and `sha256` agree).
 */
export async function completeUpload(ctx: Ctx, access: Access, id: string, input: { parts?: number; sha256?: string }) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  requireAction(m, 'upload');
  const wanted = input.sha256?.trim().toLowerCase();
  if (wanted !== undefined && !SHA256.test(wanted)) throw invalid('sha256 must be 64 hex digits');
  const same = (row: UploadRow) => (input.parts === undefined || input.parts === row.parts) && (wanted === undefined || wanted === row.expected_sha256);
  const running = await findUploadRow(ctx.db, m.id);
  if (running?.state === 'processing') {
    if (!same(running)) throw conflict('the upload is being processed already with other parts or sha256; wait for its outcome', 'conflict');
    return { migration: formatMigration(m, await loadProgress(ctx.db, m.id)), upload: await uploadView(ctx, m) };
  }
  const d = uploadDirs(ctx, m.id);
  const parts = heldParts(d.parts);
  if (parts.length === 0) throw conflict('no part has been uploaded; POST /v1/migrations/{id}/upload/parts/1 first', 'conflict');
  const missing = missingParts(parts, input.parts);
  if (missing.length)
    throw conflict(`parts ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', …' : ''} are missing; upload them, then complete again`, 'conflict', {
      missing_parts: missing,
    });
  if (input.parts !== undefined && parts.length !== input.parts)
    throw conflict(`${parts.length} parts are held, not ${input.parts}`, 'conflict', { missing_parts: [] });
  const bytes = parts.reduce((s, p) => s + p.size, 0);
  const actor = actorOf(access);
  const saved = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const current = await lockMigration(trx, m.id);
    if (!current || current.deleted_at || current.state !== 'draft') throw stateError(current ?? m, 'upload');
    const other = await findUploadRow(trx, m.id);
    if (other?.state === 'processing') {
      if (!same(other)) throw conflict('the upload is being processed already with other parts or sha256; wait for its outcome', 'conflict');
      return current;
    }
    const now = iso(ctx.clock.now());
    const row: UploadRow = {
      migration_id: m.id,
      workspace_id: m.workspace_id,
      state: 'processing',
      phase: 'verifying',
      parts: parts.length,
      bytes,
      expected_sha256: wanted ?? null,
      sha256: null,
      done_bytes: 0,
      total_bytes: bytes,
      messages: 0,
      error_reason: null,
      error_message: null,
      actor_type: actor.type,
      actor_id: actor.id,
      runner: null,
      runner_until: null,
      started_at: now,
      updated_at: now,
      finished_at: null,
    };
    await trx.deleteFrom('mailbox_migration_uploads').where('migration_id', '=', m.id).execute();
    await trx.insertInto('mailbox_migration_uploads').values(row).execute();
    await enqueue(trx, ctx.clock, { kind: UPLOAD_JOB, payload: { migrationId: m.id }, uniqueKey: uploadJobKey(m.id), sooner: true });
    await recordUploadProgress(tx, current, row);
    return current;
  });
  announceEvents(ctx);
  return { migration: formatMigration(saved, await loadProgress(ctx.db, saved.id)), upload: await uploadView(ctx, saved) };
}

/** The export file of a migration as a mail source for the scan and the copy. */
export async function openFileSource(ctx: Pick<Ctx, 'config'>, m: Pick<MigrationRow, 'id'>): Promise<FileMailbox> {
  const d = uploadDirs(ctx, m.id);
  if (!readManifest(d.read))
    throw new SourceError('connect', 'the export file of this migration is no longer on the server; create a new migration and upload it again');
  return FileMailbox.open(d.read);
}

/** Removes everything uploaded for a migration (parts, assembled file, read spool). */
export function discardUpload(ctx: Pick<Ctx, 'config'>, migrationId: string): void {
  fs.rmSync(uploadDirs(ctx, migrationId).root, { recursive: true, force: true });
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
            const d = uploadDirs(ctx, name);
            // (`file` is where uploads were assembled before they were read from their parts.)
            for (const p of [d.parts, path.join(d.root, 'file'), d.tmp]) fs.rmSync(p, { recursive: true, force: true });
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
      if (!fs.existsSync(uploadDirs(ctx, id).root)) continue;
      discardUpload(ctx, id);
      removed++;
    }
    return { rows: removed, files: removed };
  },
};
