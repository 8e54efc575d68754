// Workspace deletion. Asking for it stops the workspace at once (in one transaction): the workspace
// is marked deleted, which refuses its members, API keys, chat keys and addresses (SMTP 550); its
// webhook endpoints are disabled so nothing more is sent; members left without another workspace
// lose their push subscriptions; the deletion job is stored. The job then removes the data step by
// step in batches (workspaceDataSteps), then the workspace's frame (keys, channels, inboxes,
// memberships), logging one "workspace deletion" line per run. People keep their accounts.

import { ACCESS_REVOKED, type AccessRevoked } from '../auth/revocation.js';
import { fileDeletionHeldUntil, retryAfterHold } from '../backup/hold.js';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { iso, MINUTE } from '../platform/clock.js';
import { invalid, notFound } from '../platform/errors.js';
import { enqueue, type JobKind, type JobOutcome } from '../platform/jobs.js';
import { addToDeletionTotals, countDeletionRun, type DeletionRecord, runDeletionSteps } from './deletion-steps.js';
import { type DeletionTally, type WorkspaceDataStep, workspaceDataSteps } from './registry.js';

export const WORKSPACE_DELETE_JOB = 'workspace.delete';
/** One run works this long, logs its line and hands the queue to other jobs before continuing. */
export const DELETION_RUN_BUDGET_MS = 2000;
export const WEBHOOKS_DISABLED_REASON = 'the workspace was deleted';

export interface WorkspaceSummary {
  id: string;
  name: string;
  members: number;
  api_keys: number;
  inboxes: number;
  channels: number;
  contacts: number;
  conversations: number;
  webhook_endpoints: number;
}

async function count(
  db: Db,
  table: 'memberships' | 'api_keys' | 'inboxes' | 'channels' | 'contacts' | 'conversations' | 'webhook_endpoints',
  workspaceId: string,
): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** What deleting a workspace removes (the command shows it before --yes). */
export async function summarizeWorkspace(ctx: Pick<Ctx, 'db'>, workspace: { id: string; name: string }): Promise<WorkspaceSummary> {
  const id = workspace.id;
  const [members, apiKeys, inboxes, channels, contacts, conversations, endpoints] = await Promise.all(
    (['memberships', 'api_keys', 'inboxes', 'channels', 'contacts', 'conversations', 'webhook_endpoints'] as const).map((t) => count(ctx.db, t, id)),
  );
  return { id, name: workspace.name, members, api_keys: apiKeys, inboxes, channels, contacts, conversations, webhook_endpoints: endpoints };
}

export function describeSummary(s: WorkspaceSummary): string {
  return (
    `workspace ${JSON.stringify(s.name)} (${s.id}): ${s.members} member(s) (their accounts stay), ${s.api_keys} API key(s), ${s.inboxes} inbox(es), ` +
    `${s.channels} channel(s), ${s.contacts} contact(s), ${s.conversations} conversation(s) with their messages, attachments and original e-mails, ` +
    `${s.webhook_endpoints} webhook endpoint(s)`
  );
}

/**
 * Deletes a live workspace: it stops working when this returns; the data goes in the background.
 * `confirmName`, when given, must be the workspace's exact name.
 */
export async function deleteWorkspace(
  ctx: Ctx,
  input: { workspaceId: string; requestedBy: string; confirmName?: string },
): Promise<{ workspace_id: string; deleted_at: string }> {
  const now = ctx.clock.now();
  const deletedAt = iso(now);
  await ctx.db.transaction().execute(async (trx) => {
    const ws = await trx.selectFrom('workspaces').select(['id', 'name']).where('id', '=', input.workspaceId).where('deleted_at', 'is', null).executeTakeFirst();
    if (!ws) throw notFound('workspace');
    if (input.confirmName !== undefined && input.confirmName !== ws.name) {
      throw invalid('name must be the exact name of the workspace being deleted');
    }
    await trx.updateTable('workspaces').set({ deleted_at: deletedAt, updated_at: deletedAt }).where('id', '=', ws.id).execute();
    // Nothing more is sent: disabled endpoints receive no new deliveries and the dispatcher drops
    // the pending ones of deleted workspaces; the job deletes the endpoints shortly.
    await trx
      .updateTable('webhook_endpoints')
      .set({ disabled_at: deletedAt, disabled_reason: WEBHOOKS_DISABLED_REASON, updated_at: deletedAt })
      .where('workspace_id', '=', ws.id)
      .where('disabled_at', 'is', null)
      .execute();
    // Members for whom this was the last live workspace lose their push subscriptions.
    await trx
      .deleteFrom('push_subscriptions')
      .where('person_id', 'in', (eb) =>
        eb
          .selectFrom('memberships as m')
          .select('m.person_id')
          .where('m.workspace_id', '=', ws.id)
          .where((w) =>
            w.not(
              w.exists(
                w
                  .selectFrom('memberships as other')
                  .innerJoin('workspaces as ow', 'ow.id', 'other.workspace_id')
                  .select('other.id')
                  .whereRef('other.person_id', '=', 'm.person_id')
                  .where('ow.deleted_at', 'is', null),
              ),
            ),
          ),
      )
      .execute();
    await trx
      .insertInto('workspace_deletions')
      .values({ workspace_id: ws.id, requested_at: deletedAt, requested_by: input.requestedBy, finished_at: null })
      .onConflict((oc) => oc.column('workspace_id').doNothing())
      .execute();
    await enqueueDeletion(trx, ctx, ws.id);
  });
  ctx.log.info('workspace deleted', { workspace_id: input.workspaceId, requested_by: input.requestedBy });
  ctx.hub.emit(ACCESS_REVOKED, { workspaceId: input.workspaceId } satisfies AccessRevoked);
  ctx.jobs.wake();
  return { workspace_id: input.workspaceId, deleted_at: deletedAt };
}

function enqueueDeletion(db: Db, ctx: Pick<Ctx, 'clock'>, workspaceId: string) {
  return enqueue(db, ctx.clock, { kind: WORKSPACE_DELETE_JOB, payload: { workspaceId }, uniqueKey: `${WORKSPACE_DELETE_JOB}:${workspaceId}` });
}

/**
 * Deleted workspaces whose deletion is not finished and has no job (given up after errors, or a
 * workspace marked deleted by other means) get their job again. Returns how many were queued.
 */
export async function requeueWorkspaceDeletions(ctx: Pick<Ctx, 'db' | 'clock'>): Promise<number> {
  const unfinished = await ctx.db
    .selectFrom('workspaces as w')
    .leftJoin('workspace_deletions as d', 'd.workspace_id', 'w.id')
    .select('w.id')
    .where('w.deleted_at', 'is not', null)
    .where('d.finished_at', 'is', null)
    .execute();
  let queued = 0;
  for (const { id } of unfinished) {
    const job = await ctx.db.selectFrom('jobs').select('id').where('unique_key', '=', `${WORKSPACE_DELETE_JOB}:${id}`).executeTakeFirst();
    if (job) continue;
    await ctx.db
      .insertInto('workspace_deletions')
      .values({ workspace_id: id, requested_at: iso(ctx.clock.now()), requested_by: 'retention', finished_at: null })
      .onConflict((oc) => oc.column('workspace_id').doNothing())
      .execute();
    await enqueueDeletion(ctx.db, ctx, id);
    queued++;
  }
  return queued;
}

export interface DeletionRun {
  workspace_id: string;
  conversations_deleted: number;
  conversations_left: number;
  files_deleted: number;
  done: boolean;
}

/** One run of the deletion job: steps in order, in batches, until done or the budget is spent. */
export async function runWorkspaceDeletion(
  ctx: Ctx,
  workspaceId: string,
  opts: { steps?: readonly WorkspaceDataStep[]; budgetMs?: number } = {},
): Promise<DeletionRun | undefined> {
  const record = await ctx.db.selectFrom('workspace_deletions').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!record || record.finished_at) return undefined;
  const progress: DeletionRecord = { table: 'workspace_deletions', column: 'workspace_id', id: workspaceId };
  const started = performance.now();
  const steps = (opts.steps ?? workspaceDataSteps).map((step) => ({
    name: step.name,
    batchSize: step.batchSize,
    deleteBatch: (batch: number, tally: DeletionTally) => step.deleteBatch(ctx, workspaceId, batch, tally),
  }));
  const done = await runDeletionSteps(steps, (db, counts) => addToDeletionTotals(db, progress, counts), ctx.db, opts.budgetMs ?? DELETION_RUN_BUDGET_MS);
  if (done) await removeFrame(ctx, workspaceId);
  const run: DeletionRun = {
    workspace_id: workspaceId,
    ...(await countDeletionRun(ctx.db, progress)),
    done,
  };
  ctx.log.info('workspace deletion', { ...run, duration_ms: Math.round(performance.now() - started) });
  return run;
}

/**
 * Last: the workspace's API keys, channels, inboxes and memberships. The workspace row stays as a
 * marker of the deletion (deleting it would make the database look through every table that
 * refers to workspaces, the largest ones without an index by workspace).
 */
async function removeFrame(ctx: Ctx, workspaceId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('api_keys').where('workspace_id', '=', workspaceId).execute();
    await trx.deleteFrom('channels').where('workspace_id', '=', workspaceId).execute();
    await trx.deleteFrom('inboxes').where('workspace_id', '=', workspaceId).execute();
    await trx.deleteFrom('memberships').where('workspace_id', '=', workspaceId).execute();
    await trx
      .updateTable('workspace_deletions')
      .set({ finished_at: iso(ctx.clock.now()) })
      .where('workspace_id', '=', workspaceId)
      .execute();
  });
}

export function workspaceDeletionJob(ctx: Ctx): JobKind<{ workspaceId: string }> {
  return {
    kind: WORKSPACE_DELETE_JOB,
    leaseMs: 5 * MINUTE,
    // Never given up: a failing run is tried again (the hourly job would queue it again anyway).
    backoffMs: (attempt) => Math.min(2 ** Math.min(attempt, 8) * 1000, 5 * MINUTE),
    async run({ workspaceId }): Promise<JobOutcome> {
      // Files are not deleted while a backup archives them after its snapshot.
      const heldUntil = await fileDeletionHeldUntil(ctx);
      if (heldUntil) return { retryAt: retryAfterHold(ctx, heldUntil) };
      const run = await runWorkspaceDeletion(ctx, workspaceId);
      if (run && !run.done) return { retryAt: ctx.clock.now() };
    },
  };
}

/** At start, when no other server runs: a deletion that a killed process had under way continues at once. */
export async function resumeWorkspaceDeletions(ctx: Pick<Ctx, 'db' | 'clock'>): Promise<void> {
  await ctx.db
    .updateTable('jobs')
    .set({ lease_until: null, run_at: iso(ctx.clock.now()) })
    .where('kind', '=', WORKSPACE_DELETE_JOB)
    .execute();
}
