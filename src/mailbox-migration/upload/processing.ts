// The background processing of a completed export-file upload (job `migration.upload`, one per
// migration, stored by `complete` in the transaction that marks the upload processing):
//   verifying: the parts are hashed in order into the whole file's SHA-256 (checked against the one
//              the client named; it is also the file source's UID validity), kept as a checkpoint;
//   reading:   the file is read from its parts into a new spool (archive.ts), then swapped in; the
//              migration becomes connected in the transaction that marks the upload read.
// Progress (bytes of the phase, messages found) is written to the upload row and announced as
// migration.progress about once a second. A run holds the upload with a claim it renews as it goes,
// so a second run (a job claimed again once its lease ran out) waits instead of reading twice;
// after a crash (kill -9) the claim runs out and the job starts the unfinished phase again, with
// nothing of the interrupted read visible. A cancelled or deleted migration stops the run.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Ctx } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { announceEvents } from '../../events/service.js';
import { iso } from '../../platform/clock.js';
import { randomText } from '../../platform/ids.js';
import type { JobKind } from '../../platform/jobs.js';
import { formatMigration } from '../format.js';
import { readExport } from '../sources/archive.js';
import { PartsFile } from '../sources/parts-file.js';
import { ExportRefused } from '../sources/spool.js';
import { type Actor, loadProgress, lockMigration, logActivity, type MigrationRow, recordMigrationUpdated, saveMigration } from '../store.js';
import { findUploadRow, heldParts, partFileName, recordUploadProgress, UPLOAD_JOB, type UploadRow, uploadDirs } from './service.js';

/** How long a run's claim on an upload holds without being renewed (progress renews it). */
export const UPLOAD_CLAIM_MS = 30_000;
/** Progress is written and announced at most this often (wall time; the work is not clocked); tests lower it. */
export const UPLOAD_PROGRESS = { everyMs: 1000 };

/** The run lost its claim, or the migration was cancelled or deleted: stop without a trace. */
class RunStopped extends Error {}

export function uploadJob(ctx: Ctx): JobKind<{ migrationId: string }> {
  return {
    kind: UPLOAD_JOB,
    leaseMs: UPLOAD_CLAIM_MS,
    run: async ({ migrationId }) => {
      const retryAt = await processUpload(ctx, migrationId);
      return retryAt ? { retryAt } : undefined;
    },
    onGiveUp: async ({ migrationId }, error) => {
      // Retried with backoff and still failing (the disk, not the file): say so, keep nothing.
      await refuse(ctx, migrationId, null, 'unreadable', `the export file could not be processed on the server (${(error as Error).message})`);
    },
  };
}

/** One run: returns when to look again (another run holds the upload), or undefined when done. */
export async function processUpload(ctx: Ctx, migrationId: string): Promise<Date | undefined> {
  const token = randomText(12);
  const claimed = await claim(ctx, migrationId, token);
  if (!claimed) {
    const row = await findUploadRow(ctx.db, migrationId);
    return row?.state === 'processing' && row.runner_until ? new Date(row.runner_until) : undefined;
  }
  let row = claimed;
  const d = uploadDirs(ctx, migrationId);
  const readTmp = path.join(d.tmp, `read-${token}`);
  try {
    const m = await liveDraft(ctx, migrationId);
    if (!m) return await dropUpload(ctx, migrationId);
    // What an interrupted run left (a crash while reading) goes first.
    for (const old of fs.existsSync(d.tmp) ? fs.readdirSync(d.tmp) : [])
      if (old.startsWith('read-')) fs.rmSync(path.join(d.tmp, old), { recursive: true, force: true });
    const parts = heldParts(d.parts);
    const file = new PartsFile(parts.map((p) => ({ path: path.join(d.parts, partFileName(p)), size: p.size })));
    if (parts.length !== row.parts || file.size !== Number(row.bytes)) {
      // The parts changed or went (a cancel removed them): there is nothing to read any more.
      if (!(await liveDraft(ctx, migrationId))) return await dropUpload(ctx, migrationId);
      await refuse(ctx, migrationId, token, 'damaged', 'the uploaded parts are no longer all on the server; upload the file again from part 1');
      return undefined;
    }
    const report = progressReporter(ctx, m, token, () => row);

    if (!row.sha256) {
      const hash = createHash('sha256');
      let done = 0;
      for await (const chunk of file.chunks()) {
        hash.update(chunk);
        done += chunk.length;
        await report({ done_bytes: done });
      }
      const sha256 = hash.digest('hex');
      if (row.expected_sha256 && row.expected_sha256 !== sha256) {
        await refuse(
          ctx,
          migrationId,
          token,
          'sha256_mismatch',
          `the uploaded file hashes to ${sha256}, not ${row.expected_sha256}; check the parts (GET /v1/migrations/{id}/upload) and send the wrong ones again`,
          { received_sha256: sha256 },
          { keepParts: true },
        );
        return undefined;
      }
      row = await update(ctx, migrationId, token, { sha256, phase: 'reading', done_bytes: 0, total_bytes: 0 });
      await report({}, true);
    }

    let manifest: Awaited<ReturnType<typeof readExport>>;
    try {
      manifest = await readExport(file, readTmp, {
        maxMessageBytes: ctx.config.migration.maxMessageBytes,
        bytes: file.size,
        sha256: row.sha256!,
        now: ctx.clock.now(),
        onProgress: (p) => report({ done_bytes: p.doneBytes, total_bytes: p.totalBytes, messages: p.messages }),
      });
    } catch (error) {
      fs.rmSync(readTmp, { recursive: true, force: true });
      if (!(error instanceof ExportRefused)) throw error;
      await refuse(ctx, migrationId, token, error.reason, error.message);
      return undefined;
    }

    const current = await liveDraft(ctx, migrationId);
    if (!current) {
      fs.rmSync(readTmp, { recursive: true, force: true });
      return await dropUpload(ctx, migrationId);
    }
    fs.rmSync(d.read, { recursive: true, force: true });
    fs.renameSync(readTmp, d.read);
    const connected = await inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      const locked = await lockMigration(trx, migrationId);
      const mine = await findUploadRow(trx, migrationId);
      if (!locked || locked.deleted_at || locked.state !== 'draft' || mine?.runner !== token) return undefined;
      const next = await saveMigration(tx, locked, { state: 'connected' });
      const now = iso(ctx.clock.now());
      const done = Number(mine.total_bytes) || manifest.bytes;
      await trx
        .updateTable('mailbox_migration_uploads')
        .set({
          state: 'read',
          phase: null,
          messages: manifest.messages,
          done_bytes: done,
          total_bytes: done,
          runner: null,
          runner_until: null,
          updated_at: now,
          finished_at: now,
        })
        .where('migration_id', '=', migrationId)
        .execute();
      await logActivity(tx, next, actorOfRow(mine), 'upload_completed', {
        kind: manifest.kind,
        contents: manifest.contents,
        bytes: manifest.bytes,
        sha256: manifest.sha256,
        messages: manifest.messages,
        folders: manifest.folders.length,
        oversize: manifest.oversize,
        ignored: manifest.ignored_count,
      });
      const read = (await findUploadRow(trx, migrationId))!;
      await recordUploadProgress(tx, next, read);
      await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(trx, next.id)) });
      return next;
    });
    if (!connected) return undefined;
    announceEvents(ctx);
    // The spool holds every message now: the parts are not needed any more.
    fs.rmSync(d.parts, { recursive: true, force: true });
    ctx.log.info('migration export file read', { migration_id: migrationId, kind: manifest.kind, bytes: manifest.bytes, messages: manifest.messages });
    return undefined;
  } catch (error) {
    fs.rmSync(readTmp, { recursive: true, force: true });
    if (error instanceof RunStopped) return undefined;
    throw error;
  } finally {
    // Let the next run (a retry) claim it at once; a no-op once read, refused or dropped.
    await ctx.db
      .updateTable('mailbox_migration_uploads')
      .set({ runner: null, runner_until: null })
      .where('migration_id', '=', migrationId)
      .where('runner', '=', token)
      .execute();
  }
}

function actorOfRow(row: UploadRow): Actor {
  return { type: row.actor_type as Actor['type'], id: row.actor_id };
}

async function claim(ctx: Ctx, migrationId: string, token: string): Promise<UploadRow | undefined> {
  const now = ctx.clock.now();
  const r = await ctx.db
    .updateTable('mailbox_migration_uploads')
    .set({ runner: token, runner_until: iso(now.getTime() + UPLOAD_CLAIM_MS) })
    .where('migration_id', '=', migrationId)
    .where('state', '=', 'processing')
    .where((eb) => eb.or([eb('runner_until', 'is', null), eb('runner_until', '<', iso(now))]))
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) return undefined;
  return findUploadRow(ctx.db, migrationId);
}

async function liveDraft(ctx: Ctx, migrationId: string): Promise<MigrationRow | undefined> {
  const m = await ctx.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', migrationId).executeTakeFirst();
  return m && !m.deleted_at && m.state === 'draft' ? m : undefined;
}

/** The migration was cancelled or deleted meanwhile: its upload goes (cancel removed the files). */
async function dropUpload(ctx: Ctx, migrationId: string): Promise<undefined> {
  await ctx.db.deleteFrom('mailbox_migration_uploads').where('migration_id', '=', migrationId).execute();
  return undefined;
}

type ProgressChange = Partial<Pick<UploadRow, 'done_bytes' | 'total_bytes' | 'messages'>>;

/**
 * Writes progress to the upload row and announces it, at most once per UPLOAD_PROGRESS.everyMs (or now
 * with `force`), renewing the run's claim; throws RunStopped once the claim is lost or the
 * migration is no longer a live draft.
 */
function progressReporter(ctx: Ctx, m: MigrationRow, token: string, row: () => UploadRow) {
  let last = performance.now();
  let pending: ProgressChange = {};
  return async (change: ProgressChange, force = false) => {
    pending = { ...pending, ...change };
    const now = performance.now();
    if (!force && now - last < UPLOAD_PROGRESS.everyMs) return;
    last = now;
    const updated = await inTransaction(ctx.db, async (trx) => {
      const current = await trx.selectFrom('mailbox_migrations').select(['state', 'deleted_at']).where('id', '=', m.id).executeTakeFirst();
      if (!current || current.deleted_at || current.state !== 'draft') return undefined;
      const r = await trx
        .updateTable('mailbox_migration_uploads')
        .set({ ...pending, runner_until: iso(ctx.clock.now().getTime() + UPLOAD_CLAIM_MS), updated_at: iso(ctx.clock.now()) })
        .where('migration_id', '=', m.id)
        .where('runner', '=', token)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return undefined;
      const saved = { ...row(), ...pending };
      await recordUploadProgress({ db: trx, clock: ctx.clock }, m, saved);
      return saved;
    });
    if (!updated) throw new RunStopped();
    pending = {};
    announceEvents(ctx);
  };
}

async function update(ctx: Ctx, migrationId: string, token: string, changes: Partial<UploadRow>): Promise<UploadRow> {
  const r = await ctx.db
    .updateTable('mailbox_migration_uploads')
    .set({ ...changes, updated_at: iso(ctx.clock.now()) })
    .where('migration_id', '=', migrationId)
    .where('runner', '=', token)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) throw new RunStopped();
  return (await findUploadRow(ctx.db, migrationId))!;
}

/**
 * The file is refused: the upload ends failed with the cause, the activity log says why, and the
 * migration stays a draft. Nothing of the file is kept (the next upload starts from part 1), except
 * after a whole-file checksum mismatch: then the parts stay, so the wrong ones can be sent again.
 */
async function refuse(
  ctx: Ctx,
  migrationId: string,
  token: string | null,
  reason: string,
  message: string,
  detail: Record<string, unknown> = {},
  opts: { keepParts?: boolean } = {},
): Promise<void> {
  const d = uploadDirs(ctx, migrationId);
  const ours = (row: UploadRow | undefined): row is UploadRow => !!row && row.state === 'processing' && (token === null || row.runner === token);
  if (!ours(await findUploadRow(ctx.db, migrationId))) return;
  // Files first: a crash after this leaves a processing upload without its parts, which the next run refuses.
  if (opts.keepParts) fs.rmSync(d.tmp, { recursive: true, force: true });
  else fs.rmSync(d.root, { recursive: true, force: true });
  const refused = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const m = await lockMigration(trx, migrationId);
    const row = await findUploadRow(trx, migrationId);
    if (!m || !ours(row)) return undefined;
    const now = iso(ctx.clock.now());
    await trx
      .updateTable('mailbox_migration_uploads')
      .set({ state: 'failed', error_reason: reason, error_message: message, runner: null, runner_until: null, updated_at: now, finished_at: now })
      .where('migration_id', '=', migrationId)
      .execute();
    await logActivity(tx, m, actorOfRow(row), 'upload_refused', { reason, message, bytes: Number(row.bytes), ...detail });
    await recordUploadProgress(tx, m, (await findUploadRow(trx, migrationId))!);
    return m;
  });
  if (!refused) return;
  announceEvents(ctx);
  ctx.log.warn('migration export file refused', { migration_id: migrationId, reason });
}
