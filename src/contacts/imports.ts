// Contacts CSV import (issue 37): upload → preview → mapping → a stored job with progress.
//
// The upload is read up to MAX_IMPORT_BYTES (more: 413), decoded and parsed whole before anything
// is stored (a refused file leaves nothing behind); the file goes to storage and the import row is
// `uploaded` with its columns, a sample and a suggested mapping. Starting it with a mapping makes
// it `queued` and stores the `contacts.import` job in the same transaction. The job reads the file
// again and applies rows in batches of IMPORT_BATCH: each batch's contacts and the import's
// progress (rows done, counts, errors) commit together, and the progress is only advanced from the
// value the batch started at. A kill -9 loses at most the batch under way, which the next run (the
// lease ran out) does again from the stored rows_done: nothing is applied twice.
import type { Readable } from 'node:stream';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ContactImportsTable } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { missingInboxIds } from '../inboxes/store.js';
import { iso, MINUTE } from '../platform/clock.js';
import { conflict, forbidden, invalid, notFound, tooLarge } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { enqueue, type JobKind, type JobOutcome } from '../platform/jobs.js';
import { csvRecords, decodeCsv, detectDelimiter, MAX_IMPORT_BYTES, summarizeCsv } from './csv-file.js';
import { applyRow, type ColumnMapping, RowError, readRow } from './import-rows.js';

export const CONTACT_IMPORT_JOB = 'contacts.import';
export const IMPORT_BATCH = 200;
export const MAX_ROW_ERRORS = 1000;
export const SAMPLE_ROWS = 10;
/** A run yields after this long and the job comes back (other work gets its turn). */
const RUN_BUDGET_MS = 20_000;

export type ImportRow = ContactImportsTable;
export interface RowErrorEntry {
  row: number;
  reason: string;
}

/** Only callers that reach every inbox import: rows may match any contact of the workspace. */
function requireWholeWorkspace(access: Access) {
  if (access.inboxIds !== null) throw forbidden('importing contacts needs a credential that reaches every inbox');
}

function actorId(access: Access): string {
  return access.actor.kind === 'member' ? access.actor.personId : access.actor.keyId;
}

const fileKey = (workspaceId: string, id: string) => `contact-imports/${workspaceId}/${id}.csv`;

/** The request body, up to MAX_IMPORT_BYTES (more: 413 too_large, nothing stored). */
async function readUpTo(data: Readable, max: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of data) {
    size += (chunk as Buffer).length;
    if (size > max) {
      data.destroy();
      throw tooLarge(`the file is larger than ${max} bytes (10 MB); split it into smaller files`);
    }
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}

/** Suggested mapping from the header: name, e-mail, external_id:<inbox>, attr:<key>; other columns become attributes. */
export function suggestMapping(columns: readonly string[], inboxIds: ReadonlySet<string>): ColumnMapping[] {
  return columns.map((raw) => {
    const c = raw.trim();
    const lower = c.toLowerCase().replace(/[\s_-]+/g, '');
    if (['name', 'fullname', 'ad', 'adsoyad', 'isim'].includes(lower)) return { to: 'name' };
    if (['email', 'emails', 'e-mail', 'emailaddress', 'mail', 'eposta'].includes(lower) || lower.startsWith('email')) return { to: 'email' };
    const ext = /^external_id:(.+)$/i.exec(c);
    if (ext && inboxIds.has(ext[1])) return { to: 'external_id', inbox_id: ext[1] };
    if (['id', 'createdat', 'updatedat', 'mergedintoid'].includes(lower) || ext) return { to: 'ignore' };
    const attr = /^attr:(.+)$/i.exec(c);
    return { to: 'attribute', key: (attr ? attr[1] : c).slice(0, 100) };
  });
}

export async function uploadImport(ctx: Ctx, access: Access, input: { data: Readable; filename?: string }) {
  requireWholeWorkspace(access);
  const buf = await readUpTo(input.data, MAX_IMPORT_BYTES);
  const { text, encoding } = decodeCsv(buf);
  const delimiter = detectDelimiter(text);
  const summary = await summarizeCsv(text, delimiter, SAMPLE_ROWS);
  const now = ctx.clock.now();
  const id = newId('imp', now.getTime());
  const key = fileKey(access.workspaceId, id);
  await ctx.storage.put(key, buf, { contentType: 'text/csv' });
  const row: ImportRow = {
    id,
    workspace_id: access.workspaceId,
    created_by: actorId(access),
    state: 'uploaded',
    file_key: key,
    filename: input.filename?.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255) || null,
    encoding,
    bytes: buf.length,
    columns: JSON.stringify(summary.columns),
    delimiter,
    mapping: null,
    rows_total: summary.rows,
    rows_done: 0,
    created_count: 0,
    updated_count: 0,
    unchanged_count: 0,
    error_count: 0,
    errors: '[]',
    failure: null,
    created_at: iso(now),
    started_at: null,
    finished_at: null,
    updated_at: iso(now),
  };
  try {
    await ctx.db.insertInto('contact_imports').values(row).execute();
  } catch (error) {
    await ctx.storage.delete(key).catch(() => undefined);
    throw error;
  }
  const inboxes = await liveInboxIds(ctx, access.workspaceId, summary.columns);
  return { row, sample: summary.sample, suggested: suggestMapping(summary.columns, inboxes) };
}

/** The inbox ids named by external_id:<inbox> columns that are live inboxes of the workspace. */
async function liveInboxIds(ctx: Pick<Ctx, 'db'>, workspaceId: string, columns: readonly string[]): Promise<Set<string>> {
  const named = [...new Set(columns.map((c) => /^external_id:(.+)$/i.exec(c.trim())?.[1]).filter((x): x is string => !!x))];
  if (!named.length) return new Set();
  const missing = await missingInboxIds(ctx.db, workspaceId, named, { live: true });
  return new Set(named.filter((x) => !missing.includes(x)));
}

export async function getImportFor(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<ImportRow> {
  requireWholeWorkspace(access);
  const row = await ctx.db.selectFrom('contact_imports').selectAll().where('id', '=', id).where('workspace_id', '=', access.workspaceId).executeTakeFirst();
  if (!row) throw notFound('import');
  return row;
}

export async function listImports(ctx: Pick<Ctx, 'db'>, access: Access, limit: number): Promise<ImportRow[]> {
  requireWholeWorkspace(access);
  return ctx.db.selectFrom('contact_imports').selectAll().where('workspace_id', '=', access.workspaceId).orderBy('id', 'desc').limit(limit).execute();
}

/** The first rows of an uploaded import, for the mapping step (read from the stored file). */
export async function importSample(ctx: Pick<Ctx, 'storage'>, row: ImportRow): Promise<string[][]> {
  if (!row.file_key) return [];
  const { text } = decodeCsv(await readUpTo(await ctx.storage.get(row.file_key), MAX_IMPORT_BYTES), row.encoding);
  const out: string[][] = [];
  let header = true;
  for await (const record of csvRecords(text, row.delimiter)) {
    if (header) header = false;
    else out.push(record);
    if (out.length >= SAMPLE_ROWS) break;
  }
  return out;
}

export async function startImport(ctx: Ctx, access: Access, id: string, mapping: ColumnMapping[]): Promise<ImportRow> {
  const row = await getImportFor(ctx, access, id);
  if (row.state !== 'uploaded') throw conflict(`the import is ${row.state}; it can be started once`, 'import_state', { state: row.state });
  const columns = JSON.parse(row.columns) as string[];
  if (mapping.length !== columns.length) throw invalid(`the mapping has ${mapping.length} entries; the file has ${columns.length} columns`);
  if (mapping.filter((m) => m.to === 'name').length > 1) throw invalid('at most one column can be the name');
  if (!mapping.some((m) => m.to === 'email' || m.to === 'external_id')) {
    throw invalid('map at least one column to e-mail or to an external id: contacts are found and de-duplicated by them');
  }
  const keys = mapping.flatMap((m) => (m.to === 'attribute' ? [m.key] : []));
  const twice = keys.find((k, i) => keys.indexOf(k) !== i);
  if (twice) throw invalid(`two columns are mapped to the attribute ${JSON.stringify(twice)}`);
  const inboxes = [...new Set(mapping.flatMap((m) => (m.to === 'external_id' ? [m.inbox_id] : [])))];
  const missing = inboxes.length ? await missingInboxIds(ctx.db, access.workspaceId, inboxes, { live: true }) : [];
  if (missing.length) throw notFound(`inbox ${missing[0]}`);
  const now = iso(ctx.clock.now());
  await inTransaction(ctx.db, async (trx) => {
    const changed = await trx
      .updateTable('contact_imports')
      .set({ state: 'queued', mapping: JSON.stringify(mapping), updated_at: now })
      .where('id', '=', row.id)
      .where('state', '=', 'uploaded')
      .executeTakeFirst();
    if (Number(changed.numUpdatedRows) === 0) throw conflict('the import was started meanwhile', 'import_state', { state: 'queued' });
    await enqueue(trx, ctx.clock, { kind: CONTACT_IMPORT_JOB, payload: { importId: row.id }, uniqueKey: `${CONTACT_IMPORT_JOB}:${row.id}` });
  });
  ctx.jobs.wake();
  return getImportFor(ctx, access, id);
}

class StaleProgress extends Error {}

/**
 * Applies the import's rows from its stored progress on, a batch per transaction. `maxBatches`
 * stops early (tests use it to leave an import half done, as a crash would).
 */
export async function runImport(ctx: Ctx, importId: string, opts: { maxBatches?: number; budgetMs?: number } = {}): Promise<JobOutcome> {
  const started = performance.now();
  let row = await ctx.db.selectFrom('contact_imports').selectAll().where('id', '=', importId).executeTakeFirst();
  if (!row || (row.state !== 'queued' && row.state !== 'running') || !row.mapping || !row.file_key) return;
  if (row.state === 'queued') {
    const now = iso(ctx.clock.now());
    await ctx.db.updateTable('contact_imports').set({ state: 'running', started_at: now, updated_at: now }).where('id', '=', row.id).execute();
    row = { ...row, state: 'running', started_at: now };
  }
  const mapping = JSON.parse(row.mapping!) as ColumnMapping[];
  const { text } = decodeCsv(await readUpTo(await ctx.storage.get(row.file_key!), MAX_IMPORT_BYTES), row.encoding);
  const progress = { done: row.rows_done, created: row.created_count, updated: row.updated_count, unchanged: row.unchanged_count, errorCount: row.error_count };
  const errors = JSON.parse(row.errors) as RowErrorEntry[];
  let index = -1;
  let batch: { row: number; cells: string[] }[] = [];
  let batches = 0;
  const commit = async () => {
    const counts = { created: 0, updated: 0, unchanged: 0, errors: [] as RowErrorEntry[] };
    await inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      for (const r of batch) {
        try {
          counts[await applyRow(tx, row!.workspace_id, readRow(r.cells, mapping))]++;
        } catch (error) {
          if (!(error instanceof RowError)) throw error;
          counts.errors.push({ row: r.row, reason: error.message });
        }
      }
      const kept = [...errors, ...counts.errors].slice(0, MAX_ROW_ERRORS);
      const changed = await trx
        .updateTable('contact_imports')
        .set({
          rows_done: progress.done + batch.length,
          created_count: progress.created + counts.created,
          updated_count: progress.updated + counts.updated,
          unchanged_count: progress.unchanged + counts.unchanged,
          error_count: progress.errorCount + counts.errors.length,
          errors: JSON.stringify(kept),
          updated_at: iso(ctx.clock.now()),
        })
        .where('id', '=', importId)
        .where('state', '=', 'running')
        .where('rows_done', '=', progress.done)
        .executeTakeFirst();
      // Another run (after this one's lease ran out) moved on: this batch is rolled back.
      if (Number(changed.numUpdatedRows) === 0) throw new StaleProgress();
    });
    progress.done += batch.length;
    progress.created += counts.created;
    progress.updated += counts.updated;
    progress.unchanged += counts.unchanged;
    progress.errorCount += counts.errors.length;
    errors.push(...counts.errors.slice(0, Math.max(0, MAX_ROW_ERRORS - errors.length)));
    batch = [];
    batches++;
    if (counts.updated) announceEvents(ctx);
  };
  try {
    for await (const cells of csvRecords(text, row.delimiter)) {
      index++;
      if (index === 0 || index <= progress.done) continue;
      // Row numbers as a spreadsheet shows them: the header is row 1.
      batch.push({ row: index + 1, cells });
      if (batch.length < IMPORT_BATCH) continue;
      await commit();
      if (opts.maxBatches !== undefined && batches >= opts.maxBatches) return;
      if (performance.now() - started > (opts.budgetMs ?? RUN_BUDGET_MS)) return { retryAt: ctx.clock.now() };
    }
    if (batch.length) await commit();
  } catch (error) {
    if (error instanceof StaleProgress) return;
    throw error;
  }
  await finishImport(ctx, row.id, row.file_key!, 'done', null);
}

async function finishImport(ctx: Ctx, id: string, key: string, state: 'done' | 'failed', failure: string | null) {
  const now = iso(ctx.clock.now());
  await ctx.db
    .updateTable('contact_imports')
    .set({ state, failure, file_key: null, finished_at: now, updated_at: now })
    .where('id', '=', id)
    .where('state', 'in', ['queued', 'running'])
    .execute();
  await ctx.storage.delete(key);
}

export function contactImportJob(ctx: Ctx): JobKind<{ importId: string }> {
  return {
    kind: CONTACT_IMPORT_JOB,
    leaseMs: 10 * MINUTE,
    run: ({ importId }) => runImport(ctx, importId),
    async onGiveUp({ importId }, error) {
      const row = await ctx.db.selectFrom('contact_imports').select(['file_key']).where('id', '=', importId).executeTakeFirst();
      ctx.log.warn('contact import failed', { import_id: importId, error: String((error as Error)?.message ?? error).slice(0, 300) });
      if (row?.file_key) await finishImport(ctx, importId, row.file_key, 'failed', 'the import stopped after repeated errors; the rows done so far are kept');
    },
  };
}
