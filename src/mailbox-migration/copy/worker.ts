// The background work of migrations: one job row per migration (unique key), claimed by the job
// runner, that does a bounded step of whatever the migration's state asks (scan, copy, …) and asks
// to run again until the state needs no more work. Mailbox connections are kept between steps.
// A failure to reach the mailbox moves the migration to needs_attention (login refused: wait for a
// new password; a sign-in the provider no longer accepts: wait for a new sign-in; provider limit or a run of connection failures: try again later by itself).

import { findChannel } from '../../channels/store.js';
import type { Ctx } from '../../context.js';
import type { Db, MailboxMigrationItemsTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { announceEvents } from '../../events/service.js';
import { DIRECT_HEADER_BLOCK_BYTES, type InboundMail, parseHeaderBlock, parseSmallPlainTextMail } from '../../mail/parse.js';
import { ParsePool } from '../../mail/parse-pool.js';
import type { Clock } from '../../platform/clock.js';
import { iso, MINUTE } from '../../platform/clock.js';
import { collectDeadHeap } from '../../platform/heap.js';
import { enqueue, type JobKind } from '../../platform/jobs.js';
import { workspaceDeletedAt } from '../../workspaces/live.js';
import { formatMigration } from '../format.js';
import { removalStep } from '../removal.js';
import { openSource, recordBlocked, SourceError } from '../sources/connect.js';
import { HelpDeskMailbox, openHelpDeskReader, pullStep, waitReporter } from '../sources/helpdesk/source.js';
import { helpDeskAccount, isHelpDesk } from '../sources/helpdesk/store.js';
import { classifyImapError, describeImapError, type ReadOnlyMailbox, ReadOnlyViolation } from '../sources/imap.js';
import { FolderConnections } from '../sources/imap-folders.js';
import type { MailSource } from '../sources/mail-source.js';
import { isMailboxSource, resumedFromAttention, WORKING_STATES } from '../states.js';
import { findMigration, loadProgress, lockMigration, logActivity, type MigrationRow, recordMigrationUpdated, SYSTEM, saveMigration } from '../store.js';
import { endBySystem, endingNow, quietPeriodEnd, syncLimitEnd } from '../switching/service.js';
import { openFileSource } from '../upload/service.js';
import { BATCH_BYTES, BATCH_MESSAGES, BATCH_THREADS, copyStep } from './copy.js';
import { finishScan } from './finish-scan.js';
import { chooseFolders, type ScanParser, scanBatchOf, scanParserOf, scanStep } from './scan.js';
import { pollOldMailbox } from './sync.js';

export const MIGRATION_JOB = 'migration.work';
const HEADER_END = Buffer.from('\r\n\r\n');
/**
 * The parser thread's heap: a small young generation keeps the garbage of parsing from piling up
 * (the server's memory stays flat however large the mailbox); the old generation leaves room for a
 * message of SVC_MIGRATION_MAX_MESSAGE_BYTES.
 */
const PARSE_WORKER_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 384 };
/** Connection failures in a row before the migration asks for attention. */
export const MAX_CONNECT_FAILURES = 5;
export const PROVIDER_LIMIT_PAUSE_MS = 15 * MINUTE;
export const CONNECTION_RETRY_MS = 30 * MINUTE;
const IDLE_CONNECTION_MS = 2 * MINUTE;
/** The old mailbox is read this often while syncing. */
export const SYNC_POLL_MS = 2 * MINUTE;

export function workerKey(migrationId: string): string {
  return `migration:${migrationId}`;
}

/**
 * Makes sure the migration's worker job exists (call in the transaction that changes its state).
 * `sooner`: a job waiting for later (a connection retry, the next sync poll) runs at runAt instead.
 */
export async function ensureWorker(tx: { db: Db; clock: Clock }, migrationId: string, opts: { runAt?: Date; sooner?: boolean } = {}): Promise<void> {
  await enqueue(tx.db, tx.clock, { kind: MIGRATION_JOB, payload: { migrationId }, uniqueKey: workerKey(migrationId), runAt: opts.runAt, sooner: opts.sooner });
}

/** Tunable bounds of one run (tests make them small to stop in the middle of a copy). */
export interface WorkerLimits {
  /** A run goes on with more batches until this much time was used (0: one batch per run). */
  budgetMs: number;
  batchThreads: number;
  batchMessages: number;
  batchBytes: number;
}

/** Whether a thread of the migration still waits to be copied. */
async function hasPlannedThread(ctx: Pick<Ctx, 'db'>, migrationId: string): Promise<boolean> {
  const planned = await ctx.db
    .selectFrom('mailbox_migration_threads')
    .select('thread_key')
    .where('migration_id', '=', migrationId)
    .where('status', '=', 'planned')
    .limit(1)
    .executeTakeFirst();
  return planned !== undefined;
}

export class MigrationWorker {
  readonly limits: WorkerLimits = { budgetMs: 10_000, batchThreads: BATCH_THREADS, batchMessages: BATCH_MESSAGES, batchBytes: BATCH_BYTES };
  private readonly connections = new Map<string, { mailbox: MailSource; timer: NodeJS.Timeout }>();
  private parsePool: ParsePool | undefined;

  constructor(private readonly ctx: Ctx) {}

  job(): JobKind<{ migrationId: string }> {
    return {
      kind: MIGRATION_JOB,
      leaseMs: 3 * MINUTE,
      run: async ({ migrationId }) => {
        const retryAt = await this.runOnce(migrationId);
        return retryAt ? { retryAt } : undefined;
      },
    };
  }

  async stop(): Promise<void> {
    for (const id of [...this.connections.keys()]) await this.closeConnection(id);
    await this.parsePool?.close();
    this.parsePool = undefined;
  }

  /** Drops the cached connection of a migration (after cancel, completion, a new password). */
  async closeConnection(migrationId: string): Promise<void> {
    const c = this.connections.get(migrationId);
    if (!c) return;
    this.connections.delete(migrationId);
    clearTimeout(c.timer);
    await c.mailbox.logout();
  }

  /** A message: plain-text mail (most of a support mailbox) read on this thread, the rest in the parse worker. */
  private async parse(raw: Buffer): Promise<InboundMail> {
    const plain = await parseSmallPlainTextMail(raw);
    if (plain) return plain;
    this.parsePool ??= new ParsePool(this.ctx.log, { resourceLimits: PARSE_WORKER_LIMITS });
    return this.parsePool.parse(raw);
  }

  /**
   * A scanned header block: read directly on this thread (tens of microseconds, less than handing it
   * to the parse worker and back), unless it is large enough to be worth the worker's time limit.
   */
  private parseHeaders = (headers: Buffer) =>
    headers.length <= DIRECT_HEADER_BLOCK_BYTES ? parseHeaderBlock(headers) : this.parse(Buffer.concat([headers, HEADER_END]));

  /**
   * A scan's batch of header blocks: read on the parse worker, in one hand-off for the batch, so the
   * main thread only reads the FETCH and writes the rows (header reading was most of its work). A
   * block too large to read directly is read on its own, as parseHeaders reads it.
   */
  private parseScanned: ScanParser = async (scope, blocks) => {
    const here = scanParserOf(this.parseHeaders);
    const smallAt: number[] = [];
    const largeAt: number[] = [];
    for (const [i, h] of blocks.entries()) (h.headers.length <= DIRECT_HEADER_BLOCK_BYTES ? smallAt : largeAt).push(i);
    if (smallAt.length === 0) return here(scope, blocks);
    const small = smallAt.map((i) => blocks[i]);
    this.parsePool ??= new ParsePool(this.ctx.log, { resourceLimits: PARSE_WORKER_LIMITS });
    const read = this.parsePool.scanItems(scanBatchOf(scope, small), () => here(scope, small));
    if (largeAt.length === 0) return read;
    const [smallItems, largeItems] = await Promise.all([
      read,
      here(
        scope,
        largeAt.map((i) => blocks[i]),
      ),
    ]);
    // Back in the order fetched.
    const items: MailboxMigrationItemsTable[] = new Array(blocks.length);
    smallAt.forEach((at, k) => {
      items[at] = smallItems[k];
    });
    largeAt.forEach((at, k) => {
      items[at] = largeItems[k];
    });
    return items;
  };

  private async connection(m: MigrationRow): Promise<MailSource> {
    const cached = this.connections.get(m.id);
    if (cached && cached.mailbox.usable) {
      clearTimeout(cached.timer);
      cached.timer = this.idleTimer(m.id);
      return cached.mailbox;
    }
    if (cached) await this.closeConnection(m.id);
    const mailbox = isHelpDesk(m)
      ? await this.openHelpDesk(m)
      : isMailboxSource(m)
        ? new FolderConnections(await openSource(this.ctx, m), () => this.openAgain(m))
        : await openFileSource(this.ctx, m);
    this.connections.set(m.id, { mailbox, timer: this.idleTimer(m.id) });
    return mailbox;
  }

  /** A further connection to the mailbox, from the migration's row as it is now (a sign-in's token may have been renewed meanwhile). */
  private async openAgain(m: MigrationRow): Promise<ReadOnlyMailbox> {
    const now = await findMigration(this.ctx.db, m.workspace_id, m.id);
    if (!now) throw new Error('the migration is gone');
    return openSource(this.ctx, now);
  }

  private async openHelpDesk(m: MigrationRow): Promise<HelpDeskMailbox> {
    const reader = await openHelpDeskReader(this.ctx, m, waitReporter(this.ctx, m));
    let support = m.source_address;
    if (!support && m.channel_id) support = (await findChannel(this.ctx.db, m.channel_id))?.address ?? null;
    return new HelpDeskMailbox(this.ctx, m, reader, support ?? 'support@helpdesk.invalid');
  }

  /** Reads the help desk's export on from its stored cursor; 'more' while pages are left. */
  private async pullHelpDesk(m: MigrationRow): Promise<'more' | 'done'> {
    return this.withReconnect(m, (mb) => pullStep(this.ctx, m, (mb as HelpDeskMailbox).reader, this.limits.budgetMs));
  }

  private idleTimer(id: string): NodeJS.Timeout {
    const t = setTimeout(() => void this.closeConnection(id), IDLE_CONNECTION_MS);
    t.unref();
    return t;
  }

  /** One run; returns when to run again, or undefined when the migration needs no more work now. */
  async runOnce(migrationId: string): Promise<Date | undefined> {
    const { ctx } = this;
    const m = await ctx.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', migrationId).where('deleted_at', 'is', null).executeTakeFirst();
    if (!m) return undefined;
    const workspaceDeleted = await workspaceDeletedAt(ctx.db, m.workspace_id);
    if (workspaceDeleted !== null) {
      // A deleted workspace: no more work, and its password goes at once.
      await this.closeConnection(m.id);
      await ctx.db.updateTable('mailbox_migrations').set({ password_sealed: null }).where('id', '=', m.id).execute();
      await ctx.db.deleteFrom('jobs').where('unique_key', '=', workerKey(m.id)).execute();
      return undefined;
    }
    try {
      switch (m.state) {
        case 'scanning':
          return await this.scan(m);
        case 'copying':
          return await this.copy(m);
        case 'syncing':
          return await this.sync(m);
        case 'removing':
          await this.closeConnection(m.id);
          return (await removalStep(ctx, m.id)) ? this.finishIfIdle(m.id) : ctx.clock.now();
        case 'needs_attention':
          return await this.retryAttention(m);
        default:
          await this.closeConnection(m.id);
          return this.finishIfIdle(m.id);
      }
    } catch (error) {
      return this.failed(m, error);
    }
  }

  private async scan(m: MigrationRow): Promise<Date | undefined> {
    // A help desk is read into entries first (from the stored cursor), then scanned like a mailbox.
    if (isHelpDesk(m) && !(await helpDeskAccount(this.ctx.db, m.id))?.pull_done) {
      await this.pullHelpDesk(m);
      await this.resetFailures(m);
      return this.ctx.clock.now();
    }
    const mailbox = await this.withReconnect(m, async (mb) => {
      const step = await scanStep(this.ctx, m, mb, this.limits.budgetMs, this.parseScanned);
      return step === 'done' ? mb : undefined;
    });
    if (mailbox) {
      const folders = chooseFolders(m, await mailbox.folders());
      const saved = await finishScan(this.ctx, m, folders);
      // The plan held one record per message; none of it is live now.
      collectDeadHeap();
      if (saved) announceEvents(this.ctx);
      await this.resetFailures(m);
    }
    return this.ctx.clock.now();
  }

  private async copy(m: MigrationRow): Promise<Date | undefined> {
    if (!(await hasPlannedThread(this.ctx, m.id))) {
      if (m.state === 'copying') await this.copyEnded(m);
      return this.finishIfIdle(m.id);
    }
    const outcome = await this.withReconnect(m, (mb) =>
      copyStep(this.ctx, m, mb, { parse: (raw) => this.parse(raw), limits: this.limits }, this.limits.budgetMs),
    );
    await this.resetFailures(m);
    if (outcome === 'done' && m.state === 'copying') await this.copyEnded(m);
    return this.ctx.clock.now();
  }

  /**
   * Syncing: ends by itself after the quiet period or at the sync limit; else reads the old mailbox
   * every two minutes (new UIDs only) and copies the history it finds (and retried failures).
   */
  private async sync(m: MigrationRow): Promise<Date | undefined> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const ending = endingNow(ctx, m, now);
    if (ending) {
      await this.closeConnection(m.id);
      await endBySystem(ctx, m.id, ending);
      return this.finishIfIdle(m.id);
    }
    const polledAt = m.sync_polled_at ? new Date(m.sync_polled_at).getTime() : null;
    // An export file has no old mailbox to read: only the test message and finishing apply.
    if (isMailboxSource(m) && (polledAt === null || now.getTime() - polledAt >= SYNC_POLL_MS)) {
      // A fresh session sees the folders as they are now; a help desk reads what changed since its cursor.
      await this.closeConnection(m.id);
      if (isHelpDesk(m) && (await this.pullHelpDesk(m)) === 'more') return ctx.clock.now();
      const outcome = await this.withReconnect(m, (mb) => pollOldMailbox(ctx, m, mb, { parseHeaders: this.parseHeaders, parse: (raw) => this.parse(raw) }));
      await this.resetFailures(m);
      if (outcome.history || outcome.newMail || outcome.bothWays) {
        await inTransaction(ctx.db, (trx) =>
          logActivity({ db: trx, clock: ctx.clock }, m, SYSTEM, 'old_mailbox_read', {
            history: outcome.history,
            new_mail: outcome.newMail,
            arrived_both_ways: outcome.bothWays,
          }),
        );
      }
      if (outcome.more) return ctx.clock.now();
      await ctx.db
        .updateTable('mailbox_migrations')
        .set({ sync_polled_at: iso(now) })
        .where('id', '=', m.id)
        .where('state', '=', 'syncing')
        .execute();
      m = { ...m, sync_polled_at: iso(now) };
    }
    if (await hasPlannedThread(ctx, m.id)) return this.copy(m);
    const current = (await ctx.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', m.id).executeTakeFirst()) ?? m;
    const next = [now.getTime() + SYNC_POLL_MS - (now.getTime() - new Date(current.sync_polled_at ?? iso(now)).getTime())];
    for (const at of [quietPeriodEnd(ctx, current), syncLimitEnd(ctx, current)]) if (at) next.push(at.getTime());
    return new Date(Math.max(now.getTime(), Math.min(...next)));
  }

  /** Runs work on the cached connection; a connection that broke in between is opened once more. */
  private async withReconnect<T>(m: MigrationRow, work: (mailbox: MailSource) => Promise<T>): Promise<T> {
    const hadCached = this.connections.has(m.id);
    const mailbox = await this.connection(m);
    try {
      return await work(mailbox);
    } catch (error) {
      if (!hadCached || classifyImapError(error) !== 'connect' || error instanceof SourceError) throw error;
      await this.closeConnection(m.id);
      return work(await this.connection(m));
    }
  }

  private async copyEnded(m: MigrationRow): Promise<void> {
    await this.closeConnection(m.id);
    const saved = await inTransaction(this.ctx.db, async (trx) => {
      const tx = { db: trx, clock: this.ctx.clock };
      const current = await lockMigration(trx, m.id);
      if (!current || current.state !== 'copying') return undefined;
      const progress = await loadProgress(trx, m.id);
      const next = await saveMigration(tx, current, { state: 'syncing', copy_ended_at: iso(this.ctx.clock.now()) });
      await logActivity(tx, next, SYSTEM, 'copy_finished', {
        copied: progress.copied,
        failed: progress.failed,
        skipped: progress.skipped,
        duplicates: progress.duplicates,
      });
      await recordMigrationUpdated(tx, next, { migration: formatMigration(next, progress) });
      return next;
    });
    if (saved) {
      this.ctx.log.info('migration copy finished', { migration_id: m.id });
      announceEvents(this.ctx);
    }
  }

  private async retryAttention(m: MigrationRow): Promise<Date | undefined> {
    // A sync that waits for attention still stops at the sync limit (and its password goes).
    const limit = m.resume_state === 'syncing' ? syncLimitEnd(this.ctx, m) : null;
    if (limit && this.ctx.clock.now() >= limit) {
      await this.closeConnection(m.id);
      await endBySystem(this.ctx, m.id, 'sync_limit');
      return this.finishIfIdle(m.id);
    }
    if (!m.attention_retry_at) return this.finishIfIdle(m.id);
    const due = new Date(m.attention_retry_at);
    if (due > this.ctx.clock.now()) return due;
    try {
      await this.closeConnection(m.id);
      await this.connection(m);
    } catch (error) {
      return this.failed(m, error);
    }
    // Reachable again: back to the work it stopped.
    await inTransaction(this.ctx.db, async (trx) => {
      const tx = { db: trx, clock: this.ctx.clock };
      const current = await lockMigration(trx, m.id);
      if (!current || current.state !== 'needs_attention') return;
      const next = await saveMigration(tx, current, resumedFromAttention(current));
      await logActivity(tx, next, SYSTEM, 'resumed', { after: current.attention_reason });
      await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(trx, m.id)) });
    });
    announceEvents(this.ctx);
    return this.ctx.clock.now();
  }

  private async resetFailures(m: MigrationRow): Promise<void> {
    if (m.connect_failures > 0) await this.ctx.db.updateTable('mailbox_migrations').set({ connect_failures: 0 }).where('id', '=', m.id).execute();
  }

  /** Decides what a failure means for the migration; returns when to run again. */
  private async failed(m: MigrationRow, error: unknown): Promise<Date | undefined> {
    const { ctx } = this;
    await this.closeConnection(m.id);
    const now = ctx.clock.now();
    let kind: string;
    let step: string | undefined;
    if (error instanceof SourceError) {
      kind = error.failure;
      step = error.step;
    } else kind = classifyImapError(error);
    if (error instanceof ReadOnlyViolation) await recordBlocked(ctx, m, error);
    const message = error instanceof SourceError ? error.message : describeImapError(error);
    const imapish = error instanceof SourceError || kind !== 'protocol' || (error as { responseStatus?: unknown })?.responseStatus !== undefined;
    if (!imapish) {
      ctx.log.error('migration step failed', { migration_id: m.id, state: m.state, error });
      return new Date(now.getTime() + MINUTE);
    }
    ctx.log.warn('migration cannot read the mailbox', { migration_id: m.id, state: m.state, failure: kind, step, error: message });
    let attention: { reason: string; retryAt: Date | null } | undefined;
    let retryAt: Date | undefined;
    if (kind === 'login') attention = { reason: 'login_failed', retryAt: null };
    else if (kind === 'sign_in') attention = { reason: 'sign_in_needed', retryAt: null };
    else if (kind === 'read_only') attention = { reason: 'read_only_check', retryAt: null };
    else if (kind === 'provider_limit') attention = { reason: 'provider_limit', retryAt: new Date(now.getTime() + PROVIDER_LIMIT_PAUSE_MS) };
    else {
      const failures = m.connect_failures + 1;
      if (failures >= MAX_CONNECT_FAILURES || kind === 'address')
        attention = {
          reason: kind === 'address' ? 'address_refused' : 'connection_failed',
          retryAt: kind === 'address' ? null : new Date(now.getTime() + CONNECTION_RETRY_MS),
        };
      else {
        await ctx.db.updateTable('mailbox_migrations').set({ connect_failures: failures }).where('id', '=', m.id).execute();
        retryAt = new Date(now.getTime() + 30_000 * 2 ** (failures - 1));
      }
    }
    if (!attention) return retryAt;
    const { reason } = attention;
    // Waiting for a new password while syncing: the worker still wakes at the sync limit.
    const syncLimit = m.state === 'syncing' || m.resume_state === 'syncing' ? syncLimitEnd(ctx, m) : null;
    const attentionRetry = attention.retryAt ?? syncLimit;
    const saved = await inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      const current = await lockMigration(trx, m.id);
      if (!current) return undefined;
      if (current.state === 'needs_attention') {
        return saveMigration(tx, current, {
          attention_reason: reason,
          attention_message: message,
          attention_retry_at: attentionRetry ? iso(attentionRetry) : null,
        });
      }
      if (!WORKING_STATES.has(current.state)) return undefined;
      const next = await saveMigration(tx, current, {
        state: 'needs_attention',
        resume_state: current.state,
        attention_reason: reason,
        attention_message: message,
        attention_retry_at: attentionRetry ? iso(attentionRetry) : null,
        connect_failures: 0,
      });
      await logActivity(tx, next, SYSTEM, 'needs_attention', { reason, message, step });
      await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(trx, m.id)) });
      return next;
    });
    if (saved) announceEvents(ctx);
    return attentionRetry ?? this.finishIfIdle(m.id);
  }

  /**
   * Ends the job when the migration needs no work, in a transaction that holds the migration row:
   * a state change that wants work either committed before (seen here) or comes after the job row
   * is gone (and enqueues a new one), so no wake-up is lost.
   */
  private async finishIfIdle(migrationId: string): Promise<Date | undefined> {
    return inTransaction(this.ctx.db, async (trx) => {
      const current = await lockMigration(trx, migrationId);
      if (
        current &&
        current.deleted_at === null &&
        (WORKING_STATES.has(current.state) || (current.state === 'needs_attention' && current.attention_retry_at))
      ) {
        return current.state === 'needs_attention' ? new Date(current.attention_retry_at!) : this.ctx.clock.now();
      }
      await trx.deleteFrom('jobs').where('unique_key', '=', workerKey(migrationId)).execute();
      return undefined;
    });
  }
}
