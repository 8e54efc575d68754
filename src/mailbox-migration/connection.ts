// Testing a migration's connection to its source (mailbox or help desk) step by step, and listing the
// source's folders.
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { AppError, conflict } from '../platform/errors.js';
import { CONNECTION_TEST_WINDOW } from '../platform/rate-limit.js';
import { chooseFolders, isNeverRead } from './copy/scan.js';
import { formatMigration } from './format.js';
import { openSource, probeTransport, resolveServer, SourceError, sourceServerOf, type TestStep } from './sources/connect.js';
import type { HelpDeskReader } from './sources/helpdesk/reader.js';
import { openHelpDeskReader } from './sources/helpdesk/source.js';
import { isHelpDesk, TICKETS_FOLDER } from './sources/helpdesk/store.js';
import { describeImapError } from './sources/imap.js';
import { requireAction } from './states.js';
import {
  actorOf,
  checkLogWindow,
  getMigration,
  loadProgress,
  lockMigration,
  logActivity,
  type MigrationRow,
  recordMigrationUpdated,
  saveMigration,
} from './store.js';
import { view } from './view.js';

export interface TestResult {
  ok: boolean;
  failed_step: TestStep | null;
  message: string;
  steps: { step: TestStep; status: 'ok' | 'failed' | 'skipped'; detail: string | null }[];
}

/** DNS, connect, TLS, login, list: says which step failed. Rate limited per migration. */
export async function testConnection(ctx: Ctx, access: Access, id: string): Promise<{ result: TestResult; migration: Awaited<ReturnType<typeof view>> }> {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  requireAction(m, 'test');
  await checkLogWindow(ctx, m.id, 'test', CONNECTION_TEST_WINDOW);
  if (isHelpDesk(m)) return recordTest(ctx, access, m, await testHelpDesk(ctx, m));
  const steps: TestResult['steps'] = [];
  const order: TestStep[] = ['dns', 'connect', 'tls', 'login', 'list'];
  const server = sourceServerOf(ctx, m);
  let failure: SourceError | undefined;
  let folders = 0;
  const mark = (step: TestStep, status: 'ok' | 'failed' | 'skipped', detail: string | null = null) => steps.push({ step, status, detail });
  try {
    if (!server) throw new SourceError('dns', 'the migration has no IMAP server');
    const address = await resolveServer(ctx, server);
    mark('dns', 'ok', server.host === address ? address : `${server.host} → ${address}`);
    await probeTransport(server, address, 10_000);
    mark('connect', 'ok', `${server.host}:${server.port}`);
    if (server.tls === 'none') mark('tls', 'skipped', 'the server is read without TLS');
    else if (server.tls === 'tls') mark('tls', 'ok', 'TLS');
    const mailbox = await openSource(ctx, m, { connectTimeoutMs: 15_000 });
    try {
      if (server.tls === 'starttls') mark('tls', 'ok', 'STARTTLS');
      mark('login', 'ok', m.username);
      try {
        folders = (await mailbox.folders()).length;
      } catch (error) {
        throw new SourceError('list', describeImapError(error));
      }
      mark('list', 'ok', `${folders} folders`);
    } finally {
      await mailbox.logout();
    }
  } catch (error) {
    failure = error instanceof SourceError ? error : new SourceError('connect', describeImapError(error));
    mark(failure.step, 'failed', failure.message);
  }
  for (const step of order) if (!steps.some((s) => s.step === step)) steps.push({ step, status: 'skipped', detail: null });
  steps.sort((a, b) => order.indexOf(a.step) - order.indexOf(b.step));
  const result: TestResult = {
    ok: !failure,
    failed_step: failure?.step ?? null,
    message: failure ? `${failure.step} failed: ${failure.message}` : `connected and listed ${folders} folders; nothing was changed`,
    steps,
  };
  return recordTest(ctx, access, m, result);
}

/** The test of a help desk: DNS and TLS, sign-in (401), permission (403, not an agent), and counting tickets; waits (429) are shown. */
async function testHelpDesk(ctx: Ctx, m: MigrationRow): Promise<TestResult> {
  const order: TestStep[] = ['dns', 'connect', 'tls', 'login', 'permission', 'list'];
  const waits: string[] = [];
  let failure: SourceError | undefined;
  let outcome: Awaited<ReturnType<HelpDeskReader['test']>> | undefined;
  try {
    const reader = await openHelpDeskReader(ctx, m, (w) => {
      waits.push(`waited ${w.seconds} s (${w.reason === 'retry_after' ? 'the provider answered 429 with Retry-After' : 'rate limit'})`);
    });
    outcome = await reader.test();
  } catch (error) {
    if (error instanceof AppError) throw error;
    failure = error instanceof SourceError ? error : new SourceError('connect', describeImapError(error));
  }
  const failedAt = failure ? order.indexOf(failure.step) : order.length;
  const steps: TestResult['steps'] = order.map((step, i) => {
    if (i < failedAt) {
      const detail =
        step === 'dns' || step === 'connect'
          ? (outcome?.host ?? null)
          : step === 'tls'
            ? outcome?.secure
              ? 'HTTPS'
              : 'plain HTTP (a test setting)'
            : step === 'login'
              ? (outcome?.signedInAs ?? null)
              : step === 'list'
                ? `${outcome?.tickets ?? '?'} tickets${waits.length ? `; ${waits.join('; ')}` : ''}`
                : null;
      return { step, status: 'ok', detail };
    }
    if (i === failedAt) return { step, status: 'failed', detail: `${failure!.message}${waits.length ? `; ${waits.join('; ')}` : ''}` };
    return { step, status: 'skipped', detail: null };
  });
  return {
    ok: !failure,
    failed_step: failure?.step ?? null,
    message: failure
      ? `${failure.step} failed: ${failure.message}`
      : `signed in as ${outcome!.signedInAs} and counted ${outcome!.tickets ?? 'the'} tickets; nothing was changed (GET requests only)`,
    steps,
  };
}

async function recordTest(ctx: Ctx, access: Access, m: MigrationRow, result: TestResult) {
  const saved = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const current = (await lockMigration(trx, m.id))!;
    await logActivity(tx, current, actorOf(access), 'test', { ok: result.ok, failed_step: result.failed_step, message: result.message });
    if (result.ok && current.state === 'draft') {
      const next = await saveMigration(tx, current, { state: 'connected' });
      await logActivity(tx, next, actorOf(access), 'connected');
      await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(trx, next.id)) });
      return next;
    }
    return current;
  });
  announceEvents(ctx);
  return { result, migration: await view(ctx, saved) };
}

/** The mailbox's folders as they are now (read live), with what the migration would read. */
export async function listFolders(ctx: Ctx, access: Access, id: string) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  requireAction(m, 'folders');
  if (isHelpDesk(m)) return { data: [await helpDeskFolder(ctx, m)] };
  let mailbox: Awaited<ReturnType<typeof openSource>>;
  try {
    mailbox = await openSource(ctx, m, { connectTimeoutMs: 15_000 });
  } catch (error) {
    const e = error instanceof SourceError ? error : new SourceError('connect', describeImapError(error));
    throw conflict(`cannot read the mailbox's folders: ${e.step} failed: ${e.message}`, 'mailbox_unreachable', { failed_step: e.step });
  }
  try {
    const all = await mailbox.folders();
    const { chosen } = chooseFolders(m, all);
    const chosenPaths = new Set(chosen.map((c) => c.path));
    const out = [];
    for (const f of all) {
      const neverRead = isNeverRead(f);
      let messages: number | null = null;
      if (!neverRead && !f.noSelect) messages = (await mailbox.status(f.path)).messages;
      out.push({
        path: f.path,
        name: f.name,
        delimiter: f.delimiter,
        special_use: f.specialUse,
        selectable: !f.noSelect,
        never_read: neverRead,
        chosen: chosenPaths.has(f.path) && !neverRead,
        messages,
      });
    }
    return { data: out };
  } finally {
    await mailbox.logout();
  }
}

/** A help desk has no folders: one entry, all tickets, with the count the provider gives now. */
async function helpDeskFolder(ctx: Ctx, m: MigrationRow) {
  let tickets: number | null;
  try {
    tickets = await (await openHelpDeskReader(ctx, m)).ticketCount();
  } catch (error) {
    if (error instanceof AppError) throw error;
    const e = error instanceof SourceError ? error : new SourceError('connect', describeImapError(error));
    throw conflict(`cannot count the help desk's tickets: ${e.step} failed: ${e.message}`, 'mailbox_unreachable', { failed_step: e.step });
  }
  return {
    path: TICKETS_FOLDER,
    name: 'All tickets',
    delimiter: null,
    special_use: '\\All',
    selectable: true,
    never_read: false,
    chosen: true,
    messages: null,
    tickets,
  };
}
