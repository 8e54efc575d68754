// Inbox deletion. Asking for it stops the inbox at once, in one transaction: the inbox is marked
// deleted (the API no longer finds it, its slug is free again), its channels are removed (mail to
// their addresses gets 550, their chat keys and visitor sessions are refused), webhook endpoints
// limited to it are deleted, it leaves API keys' inbox limits (a key that reached only this inbox is
// revoked), migrations into it are cancelled (passwords deleted), its unfinished broadcasts are
// cancelled, and the deletion job is stored. The job then runs the workspace deletion steps that
// have an inbox part (conversations with their files, its contacts' external ids, broadcasts, the
// Amazon SES tenant) in batches, and removes the inbox row last, logging one "inbox deletion" line
// per run. Contacts belong to the workspace and stay; events stay until the event retention.

import { removeInboxFromKeys } from '../api-keys/service.js';
import type { Access } from '../auth/access.js';
import { fileDeletionHeldUntil, retryAfterHold } from '../backup/hold.js';
import { cancelInboxBroadcasts } from '../broadcasts/store.js';
import { CHANNELS_DELETED, type ChannelsDeleted } from '../channels/service.js';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { announceEvents, recordEvent } from '../events/service.js';
import { formatInbox, resolveInbox } from '../inboxes/service.js';
import { cancelInboxMigrations } from '../mailbox-migration/service.js';
import { discardUpload } from '../mailbox-migration/upload/service.js';
import { iso, MINUTE } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { enqueue, type JobKind, type JobOutcome } from '../platform/jobs.js';
import { deleteInboxEndpoints } from '../webhooks/service.js';
import { addToDeletionTotals, countDeletionRun, type DeletionRecord, runDeletionSteps } from './deletion-steps.js';
import { type DeletionTally, type WorkspaceDataStep, workspaceDataSteps } from './registry.js';
import { DELETION_RUN_BUDGET_MS } from './workspace-deletion.js';

export const INBOX_DELETE_JOB = 'inbox.delete';

export interface InboxDeleted {
  inbox_id: string;
  deleted_at: string;
  channels_deleted: string[];
  webhook_endpoints_deleted: string[];
  api_keys_changed: string[];
  api_keys_revoked: string[];
  migrations_cancelled: string[];
  broadcasts_cancelled: string[];
}

function requester(access: Access): string {
  return access.actor.kind === 'member' ? access.actor.personId : access.actor.keyId;
}

/** Deletes a live inbox (by id or slug): it stops receiving when this returns; the data goes in the background. */
export async function deleteInbox(ctx: Ctx, access: Access, ref: string): Promise<InboxDeleted> {
  const now = ctx.clock.now();
  const deletedAt = iso(now);
  const result = await ctx.db.transaction().execute(async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const inbox = await resolveInbox(tx, access.workspaceId, ref);
    // The slug is freed at once: `~` never appears in a chosen or derived slug.
    const marked = await trx
      .updateTable('inboxes')
      .set({ deleted_at: deletedAt, updated_at: deletedAt, slug: `~${inbox.id}` })
      .where('id', '=', inbox.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(marked.numUpdatedRows) !== 1) throw notFound('inbox');
    const channels = (await trx.selectFrom('channels').select('id').where('inbox_id', '=', inbox.id).execute()).map((c) => c.id);
    // Their visitor sessions and tenant checks go with them (foreign keys); conversations keep no channel.
    if (channels.length) await trx.deleteFrom('channels').where('id', 'in', channels).execute();
    const endpoints = await deleteInboxEndpoints(trx, inbox.id);
    const keys = await removeInboxFromKeys(trx, ctx.clock, access.workspaceId, inbox.id);
    const migrations = await cancelInboxMigrations(tx, inbox.id, access);
    const broadcasts = await cancelInboxBroadcasts(tx, inbox.id);
    await trx
      .insertInto('inbox_deletions')
      .values({ inbox_id: inbox.id, workspace_id: access.workspaceId, requested_at: deletedAt, requested_by: requester(access), finished_at: null })
      .onConflict((oc) => oc.column('inbox_id').doNothing())
      .execute();
    await enqueueDeletion(trx, ctx, inbox.id);
    await recordEvent(tx, {
      workspaceId: access.workspaceId,
      inboxId: inbox.id,
      type: 'inbox.deleted',
      occurredAt: now,
      data: { inbox: { ...formatInbox(inbox), deleted_at: deletedAt }, channel_ids: channels },
      webhook: false,
    });
    return {
      inbox_id: inbox.id,
      deleted_at: deletedAt,
      channels_deleted: channels,
      webhook_endpoints_deleted: endpoints,
      api_keys_changed: keys.changed,
      api_keys_revoked: keys.revoked,
      migrations_cancelled: migrations,
      broadcasts_cancelled: broadcasts,
    } satisfies InboxDeleted;
  });
  ctx.log.info('inbox deleted', {
    workspace_id: access.workspaceId,
    inbox_id: result.inbox_id,
    requested_by: requester(access),
    channels: result.channels_deleted.length,
  });
  if (result.channels_deleted.length) ctx.hub.emit(CHANNELS_DELETED, { channelIds: result.channels_deleted } satisfies ChannelsDeleted);
  for (const id of result.migrations_cancelled) discardUpload(ctx, id);
  announceEvents(ctx);
  ctx.jobs.wake();
  return result;
}

function enqueueDeletion(db: Db, ctx: Pick<Ctx, 'clock'>, inboxId: string) {
  return enqueue(db, ctx.clock, { kind: INBOX_DELETE_JOB, payload: { inboxId }, uniqueKey: `${INBOX_DELETE_JOB}:${inboxId}` });
}

/** Unfinished inbox deletions without a job (given up, or lost) get their job again. Returns how many. */
export async function requeueInboxDeletions(ctx: Pick<Ctx, 'db' | 'clock'>): Promise<number> {
  const unfinished = await ctx.db.selectFrom('inbox_deletions').select('inbox_id').where('finished_at', 'is', null).execute();
  let queued = 0;
  for (const { inbox_id } of unfinished) {
    const job = await ctx.db.selectFrom('jobs').select('id').where('unique_key', '=', `${INBOX_DELETE_JOB}:${inbox_id}`).executeTakeFirst();
    if (job) continue;
    await enqueueDeletion(ctx.db, ctx, inbox_id);
    queued++;
  }
  return queued;
}

export interface InboxDeletionRun {
  workspace_id: string;
  inbox_id: string;
  conversations_deleted: number;
  conversations_left: number;
  files_deleted: number;
  done: boolean;
}

/** The steps of the workspace deletion table that have an inbox part, in the table's order. */
export function inboxDataSteps(steps: readonly WorkspaceDataStep[] = workspaceDataSteps): WorkspaceDataStep[] {
  return steps.filter((s) => s.deleteInboxBatch);
}

/** One run of the job: the inbox steps in order, in batches, until done or the budget is spent. */
export async function runInboxDeletion(ctx: Ctx, inboxId: string, opts: { budgetMs?: number } = {}): Promise<InboxDeletionRun | undefined> {
  const record = await ctx.db.selectFrom('inbox_deletions').selectAll().where('inbox_id', '=', inboxId).executeTakeFirst();
  if (!record || record.finished_at) return undefined;
  const progress: DeletionRecord = { table: 'inbox_deletions', column: 'inbox_id', id: inboxId };
  const scope = { workspaceId: record.workspace_id, inboxId };
  const started = performance.now();
  const steps = inboxDataSteps().map((step) => ({
    name: step.name,
    batchSize: step.batchSize,
    deleteBatch: (batch: number, tally: DeletionTally) => step.deleteInboxBatch!(ctx, scope, batch, tally),
  }));
  let done = await runDeletionSteps(steps, (db, counts) => addToDeletionTotals(db, progress, counts), ctx.db, opts.budgetMs ?? DELETION_RUN_BUDGET_MS);
  if (done) done = await removeInboxRow(ctx, inboxId);
  const run: InboxDeletionRun = {
    workspace_id: record.workspace_id,
    inbox_id: inboxId,
    ...(await countDeletionRun(ctx.db, progress)),
    done,
  };
  ctx.log.info('inbox deletion', { ...run, duration_ms: Math.round(performance.now() - started) });
  return run;
}

/**
 * Last: the inbox row (what still refers to it goes by its foreign keys; migrations keep their
 * record without it). A conversation that committed after the conversations step (mail accepted
 * just before the deletion) makes the job run the steps again instead.
 */
async function removeInboxRow(ctx: Ctx, inboxId: string): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const late = await trx.selectFrom('conversations').select('id').where('inbox_id', '=', inboxId).limit(1).executeTakeFirst();
    if (late) return false;
    await trx.deleteFrom('channels').where('inbox_id', '=', inboxId).execute();
    await trx.deleteFrom('inboxes').where('id', '=', inboxId).execute();
    await trx
      .updateTable('inbox_deletions')
      .set({ finished_at: iso(ctx.clock.now()) })
      .where('inbox_id', '=', inboxId)
      .execute();
    return true;
  });
}

export function inboxDeletionJob(ctx: Ctx): JobKind<{ inboxId: string }> {
  return {
    kind: INBOX_DELETE_JOB,
    leaseMs: 5 * MINUTE,
    // Never given up: a failing run is tried again (the hourly job would queue it again anyway).
    backoffMs: (attempt) => Math.min(2 ** Math.min(attempt, 8) * 1000, 5 * MINUTE),
    async run({ inboxId }): Promise<JobOutcome> {
      const heldUntil = await fileDeletionHeldUntil(ctx);
      if (heldUntil) return { retryAt: retryAfterHold(ctx, heldUntil) };
      const run = await runInboxDeletion(ctx, inboxId);
      if (run && !run.done) return { retryAt: ctx.clock.now() };
    },
  };
}

/** At start, when no other server runs: a deletion that a killed process had under way continues at once. */
export async function resumeInboxDeletions(ctx: Pick<Ctx, 'db' | 'clock'>): Promise<void> {
  await ctx.db
    .updateTable('jobs')
    .set({ lease_until: null, run_at: iso(ctx.clock.now()) })
    .where('kind', '=', INBOX_DELETE_JOB)
    .execute();
}
