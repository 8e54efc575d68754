// Mailbox migrations: the service functions behind the API (create, read, change, connect, test,
// scan, preview, start, pause, resume, cancel, retry, errors). Every change of state goes through
// `act`, which checks the state machine, records the activity log line and migration.updated in
// the same transaction, and makes sure the background worker runs when the new state needs it.

import { z } from 'zod';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { iso } from '../platform/clock.js';
import { invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import { charCount } from '../platform/text.js';
import { testConnection } from './connection.js';
import { ensureWorker } from './copy/worker.js';
import { formatMigration } from './format.js';
import { address, CLOSE_AFTER_DEFAULT_DAYS, columnsOf, createChannelForMailbox, type MigrationInput } from './input.js';
import { type HelpDeskCredentials, helpDeskCredentialsOf } from './sources/helpdesk/source.js';
import { isHelpDesk, saveHelpDeskAccount } from './sources/helpdesk/store.js';
import { detectProvider, findPreset, operatorSettings, PRESETS, providerConfigured } from './sources/presets.js';
import { isSignInProvider } from './sources/sign-in.js';
import { ENDED_STATES, type MigrationAction, requireAction, resumedFromAttention, stateError, WORKING_STATES } from './states.js';
import {
  actorOf,
  findMigration,
  getMigration,
  loadProgress,
  lockMigration,
  logActivity,
  type MigrationRow,
  recordMigrationUpdated,
  saveMigration,
} from './store.js';
import { discardUpload } from './upload/service.js';
import { view } from './view.js';

// Parts of the service in files of their own; other features, routes and commands import them from here.
export { listFolders, type TestResult, testConnection } from './connection.js';
export { CLOSE_AFTER_DEFAULT_DAYS, type MigrationInput } from './input.js';
export { listActivity, listErrors, PREVIEW_DEFAULT, previewMigration } from './reads.js';

export async function createMigration(ctx: Ctx, access: Access, input: MigrationInput) {
  const withProvider = { ...input };
  if (withProvider.provider === undefined) {
    if (withProvider.imap) withProvider.provider = 'imap';
    else if (withProvider.source_address)
      withProvider.provider = (await detectProvider(address(withProvider.source_address, 'source_address'), ctx.resolveMx)).provider.id;
    else throw invalid('name a provider (GET /v1/migrations/presets), an imap server or a source_address');
  }
  const { set, createChannelFor } = await columnsOf(ctx, access.workspaceId, withProvider);
  const preset = findPreset(set.provider!)!;
  if (preset.id === 'imap' && !set.imap_host) throw invalid('the provider "imap" needs imap.host');
  const now = iso(ctx.clock.now());
  const actor = actorOf(access);
  const row: MigrationRow = {
    id: newId('mig', ctx.clock.now().getTime()),
    workspace_id: access.workspaceId,
    state: 'draft',
    provider: preset.id,
    source_address: null,
    imap_host: null,
    imap_port: null,
    imap_tls: null,
    username: null,
    password_sealed: null,
    credentials_set_at: null,
    inbox_id: null,
    channel_id: null,
    folders: null,
    date_from: null,
    date_to: null,
    folder_labels: '{}',
    team_members: '{}',
    close_after_days: CLOSE_AFTER_DEFAULT_DAYS,
    skip_automatic: 1,
    keep_originals: 0,
    plan_version: 1,
    scanned_version: null,
    summary: null,
    resume_state: null,
    attention_reason: null,
    attention_message: null,
    attention_retry_at: null,
    connect_failures: 0,
    blocked_commands: 0,
    copy_started_at: null,
    copy_ended_at: null,
    ended_at: null,
    deleted_at: null,
    sync_polled_at: null,
    probe_token: null,
    probe_sent_at: null,
    probe_arrived_at: null,
    probe_route: null,
    last_old_only_at: null,
    end_reason: null,
    removal: null,
    keep_reading: 0,
    reading_handover: null,
    created_by: actor.id,
    created_at: now,
    updated_at: now,
    ...set,
  };
  if (!row.username && row.source_address) row.username = row.source_address;
  let created_channel: Awaited<ReturnType<typeof createChannelForMailbox>> | undefined;
  await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    await trx.insertInto('mailbox_migrations').values(row).execute();
    await logActivity(tx, row, actor, 'created', { provider: row.provider, source_address: row.source_address });
    if (createChannelFor && row.inbox_id) {
      created_channel = await createChannelForMailbox(ctx, tx, row, row.inbox_id, createChannelFor, access);
      row.channel_id = created_channel.id;
      await trx.updateTable('mailbox_migrations').set({ channel_id: row.channel_id }).where('id', '=', row.id).execute();
    }
    await recordMigrationUpdated(tx, row, { migration: formatMigration(row, await loadProgress(trx, row.id)) });
  });
  announceEvents(ctx);
  return { ...(await view(ctx, row)), ...(created_channel ? { created_channel } : {}) };
}

export async function getMigrationView(ctx: Pick<Ctx, 'db' | 'config'>, access: Access, id: string) {
  return view(ctx, await getMigration(ctx.db, access.workspaceId, id));
}

export async function listMigrations(ctx: Pick<Ctx, 'db' | 'config'>, access: Access, page: { limit?: number; cursor?: string }) {
  const limit = page.limit ?? 50;
  const before = decodeCursor(page.cursor, z.string());
  let q = ctx.db.selectFrom('mailbox_migrations').selectAll().where('workspace_id', '=', access.workspaceId).where('deleted_at', 'is', null);
  if (before) q = q.where('id', '<', before);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  const views = new Map(await Promise.all(rows.slice(0, limit).map(async (r) => [r.id, await view(ctx, r)] as const)));
  return toPage(
    rows,
    limit,
    (r) => r.id,
    (r) => views.get(r.id)!,
  );
}

/**
 * One change of a migration in one transaction: the state machine's check, the change, the log
 * line, migration.updated, and the worker when the new state needs one.
 */
export async function act(
  ctx: Ctx,
  access: Access,
  id: string,
  action: MigrationAction,
  change: (
    m: MigrationRow,
    tx: { db: Db; clock: Ctx['clock'] },
  ) => Promise<{ set: Partial<MigrationRow>; detail?: Record<string, unknown>; log?: string } | undefined>,
) {
  const actor = actorOf(access);
  const saved = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const found = await findMigration(trx, access.workspaceId, id);
    if (!found) throw notFound('migration');
    const m = (await lockMigration(trx, found.id))!;
    requireAction(m, action);
    const result = await change(m, tx);
    if (!result) return m;
    const next = await saveMigration(tx, m, result.set);
    await logActivity(tx, next, actor, result.log ?? action, result.detail);
    await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(trx, next.id)) });
    // A new state (resumed, new password, copy started) is worked on now, not when a retry was due.
    if (WORKING_STATES.has(next.state)) await ensureWorker(tx, next.id, { sooner: next.state !== m.state });
    return next;
  });
  announceEvents(ctx);
  ctx.jobs.wake();
  return view(ctx, saved);
}

export async function updateMigration(ctx: Ctx, access: Access, id: string, input: MigrationInput) {
  let created_channel: Awaited<ReturnType<typeof createChannelForMailbox>> | undefined;
  const updated = await act(ctx, access, id, 'update', async (m, tx) => {
    const { set, mailboxChanged, planChanged, createChannelFor } = await columnsOf({ ...tx, config: ctx.config }, access.workspaceId, input, m);
    if (
      m.copy_started_at &&
      (mailboxChanged || (set.inbox_id !== undefined && set.inbox_id !== m.inbox_id) || (set.channel_id !== undefined && set.channel_id !== m.channel_id))
    ) {
      throw stateError(m, 'update', 'the mailbox, inbox and channel cannot change once copying began; the other choices can');
    }
    const target = { ...m, ...set };
    if (target.provider === 'imap' && !target.imap_host) throw invalid('the provider "imap" needs imap.host');
    if (mailboxChanged) {
      // Another mailbox: the connection and the plan start over.
      await tx.db.deleteFrom('mailbox_migration_items').where('migration_id', '=', m.id).execute();
      await tx.db.deleteFrom('mailbox_migration_threads').where('migration_id', '=', m.id).execute();
      await tx.db.deleteFrom('mailbox_migration_folders').where('migration_id', '=', m.id).execute();
      Object.assign(set, { state: 'draft', summary: null, scanned_version: null });
    }
    if (planChanged) {
      set.plan_version = m.plan_version + 1;
      // A plan exists already: plan again at once (ready → scanning → ready, paused → scanning → paused).
      if (!mailboxChanged && (m.state === 'ready' || m.state === 'paused')) {
        set.state = 'scanning';
        await tx.db.updateTable('mailbox_migration_folders').set({ scan_done: 0, uid_next: null }).where('migration_id', '=', m.id).execute();
      }
    }
    if (createChannelFor && set.inbox_id) {
      created_channel = await createChannelForMailbox(ctx, tx, m, set.inbox_id, createChannelFor, access);
      set.channel_id = created_channel.id;
    }
    return { set, detail: { fields: Object.keys(input).sort() } };
  });
  return { ...updated, ...(created_channel ? { created_channel } : {}) };
}

export async function deleteMigration(ctx: Ctx, access: Access, id: string): Promise<void> {
  const actor = actorOf(access);
  await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const m = await findMigration(trx, access.workspaceId, id);
    if (!m) throw notFound('migration');
    requireAction(m, 'delete');
    if (!m.copy_started_at) {
      // Nothing was copied: nothing to keep on record.
      await trx.deleteFrom('mailbox_migrations').where('id', '=', m.id).execute();
    } else {
      // The activity log (and what was imported, for remove-history records) stays for the audit period.
      const now = iso(ctx.clock.now());
      await saveMigration(tx, m, { deleted_at: now, password_sealed: null, ended_at: m.ended_at ?? now });
      await logActivity(tx, m, actor, 'deleted');
    }
    await trx.deleteFrom('jobs').where('unique_key', '=', `migration:${m.id}`).execute();
    await recordMigrationUpdated(tx, m, { migration: { id: m.id, deleted: true } });
  });
  discardUpload(ctx, id);
  announceEvents(ctx);
}

export async function setCredentials(
  ctx: Ctx,
  access: Access,
  id: string,
  input: { username?: string; password?: string } & HelpDeskCredentials,
  opts: { via?: 'link' } = {},
) {
  const found = await getMigration(ctx.db, access.workspaceId, id);
  if (isHelpDesk(found)) return setHelpDeskCredentials(ctx, access, id, found.provider, input, opts);
  if (isSignInProvider(found.provider))
    throw invalid(
      `${findPreset(found.provider)!.name} connects with a sign-in, not a password: PUT …/credentials without a password answers the address to open`,
    );
  if (!input.password || charCount(input.password) > 1000) throw invalid('password must be 1 to 1000 characters');
  const sealed = ctx.sealer.seal(input.password);
  const result = await act(ctx, access, id, 'credentials', async (m) => {
    const username = input.username?.trim() || m.username || m.source_address;
    if (!username || charCount(username) > 320) throw invalid('username must be 1 to 320 characters (or set source_address)');
    const set: Partial<MigrationRow> = { username, password_sealed: sealed, credentials_set_at: iso(ctx.clock.now()) };
    // A new password fixes a refused login: the work continues where it stopped.
    if (m.state === 'needs_attention') Object.assign(set, resumedFromAttention(m));
    return { set, log: m.password_sealed ? 'credentials_replaced' : 'credentials_set', detail: { username, ...(opts.via ? { via: opts.via } : {}) } };
  });
  return result;
}

/**
 * A help desk's credentials (Zendesk: subdomain, agent e-mail, API token; Help Scout: app id and
 * secret): the secret is sealed like a password, then tested at once; the answer carries the test.
 */
async function setHelpDeskCredentials(ctx: Ctx, access: Access, id: string, provider: string, input: HelpDeskCredentials, opts: { via?: 'link' }) {
  const { username, secret, account } = helpDeskCredentialsOf(provider, input);
  const sealed = ctx.sealer.seal(secret);
  await act(ctx, access, id, 'credentials', async (m, tx) => {
    await saveHelpDeskAccount(tx, m, account, username);
    const set: Partial<MigrationRow> = { username, password_sealed: sealed, credentials_set_at: iso(ctx.clock.now()) };
    if (m.state === 'needs_attention') Object.assign(set, resumedFromAttention(m));
    return {
      set,
      log: m.password_sealed ? 'credentials_replaced' : 'credentials_set',
      detail: { username, ...(account ? { account } : {}), ...(opts.via ? { via: opts.via } : {}) },
    };
  });
  const { result, migration } = await testConnection(ctx, access, id);
  return { ...migration, test: result };
}

export async function startScan(ctx: Ctx, access: Access, id: string) {
  return act(ctx, access, id, 'scan', async (m, tx) => {
    await tx.db.updateTable('mailbox_migration_folders').set({ scan_done: 0, uid_next: null }).where('migration_id', '=', m.id).execute();
    return { set: { state: 'scanning' }, log: 'scan_started' };
  });
}

export async function startCopy(ctx: Ctx, access: Access, id: string) {
  return act(ctx, access, id, 'start', async (m) => {
    if (!m.inbox_id || !m.channel_id) throw invalid('choose the inbox and its e-mail channel (inbox_id, channel_id) before starting');
    return { set: { state: 'copying', copy_started_at: iso(ctx.clock.now()) }, log: 'copy_started' };
  });
}

export async function pauseCopy(ctx: Ctx, access: Access, id: string) {
  return act(ctx, access, id, 'pause', async () => ({ set: { state: 'paused' }, log: 'paused' }));
}

export async function resumeCopy(ctx: Ctx, access: Access, id: string) {
  return act(ctx, access, id, 'resume', async (m) => {
    if (m.state === 'paused') return { set: { state: 'copying' }, log: 'resumed' };
    return {
      set: resumedFromAttention(m),
      log: 'resumed',
      detail: { after: m.attention_reason },
    };
  });
}

export async function cancelMigration(ctx: Ctx, access: Access, id: string) {
  const cancelled = await act(ctx, access, id, 'cancel', async () => ({
    // The password is deleted at once; the worker stops at its next step.
    set: {
      state: 'cancelled',
      password_sealed: null,
      ended_at: iso(ctx.clock.now()),
      end_reason: 'cancelled',
      resume_state: null,
      attention_reason: null,
      attention_message: null,
      attention_retry_at: null,
    },
    log: 'cancelled',
  }));
  discardUpload(ctx, cancelled.id);
  return cancelled;
}

/** Failed messages are planned again (and copied by the running copy, or the sync). */
export async function retryFailed(ctx: Ctx, access: Access, id: string) {
  return act(ctx, access, id, 'retry', async (m, tx) => {
    const failed = await tx.db
      .selectFrom('mailbox_migration_items')
      .select(['source_key', 'thread_key'])
      .where('migration_id', '=', m.id)
      .where('status', '=', 'failed')
      .execute();
    if (failed.length === 0) return { set: {}, log: 'retry', detail: { messages: 0 } };
    await tx.db
      .updateTable('mailbox_migration_items')
      .set({ status: 'planned', error: null })
      .where('migration_id', '=', m.id)
      .where('status', '=', 'failed')
      .execute();
    const threads = [...new Set(failed.map((f) => f.thread_key).filter((t): t is string => !!t))];
    for (let i = 0; i < threads.length; i += 500) {
      await tx.db
        .updateTable('mailbox_migration_threads')
        .set({ status: 'planned' })
        .where('migration_id', '=', m.id)
        .where('thread_key', 'in', threads.slice(i, i + 500))
        .execute();
    }
    return { set: {}, log: 'retry', detail: { messages: failed.length } };
  });
}

/** The newest conversations as they will look (from the scanned headers). */
export function listPresets(config: Pick<Ctx['config'], 'oauth'>) {
  return PRESETS.map((p) => ({
    id: p.id,
    name: p.name,
    kind: p.kind,
    imap: p.imap,
    app_password: p.app_password,
    app_password_url: p.app_password_url,
    default_folders: p.default_folders,
    never_read: ['spam', 'trash', 'drafts'],
    note: p.note,
    configured: providerConfigured(p, config),
    /** What the operator sets for this provider (sign-in providers' OAuth clients); empty for the others. */
    operator_settings: operatorSettings(p),
  }));
}

export async function detect(ctx: Pick<Ctx, 'resolveMx' | 'config'>, rawAddress: string) {
  const a = address(rawAddress, 'address');
  const found = await detectProvider(a, ctx.resolveMx);
  const p = found.provider;
  return {
    address: a,
    provider: p.id,
    provider_name: p.name,
    kind: p.kind,
    found_by: found.found_by,
    mx_hosts: found.mx_hosts,
    imap: p.imap,
    app_password: p.app_password,
    app_password_url: p.app_password_url,
    configured: providerConfigured(p, ctx.config),
    default_folders: p.default_folders,
  };
}

export { ENDED_STATES };

/**
 * An inbox was deleted: migrations into it that have not ended are cancelled, their passwords
 * deleted, in the caller's transaction (with the activity line and migration.updated). Ended ones
 * keep their record. Returns the ids cancelled (their uploads go with discardUpload after commit).
 */
export async function cancelInboxMigrations(tx: { db: Db; clock: Ctx['clock'] }, inboxId: string, actor: Access): Promise<string[]> {
  const rows = await tx.db
    .selectFrom('mailbox_migrations')
    .selectAll()
    .where('inbox_id', '=', inboxId)
    .where('deleted_at', 'is', null)
    .where('state', 'not in', [...ENDED_STATES])
    .execute();
  const now = iso(tx.clock.now());
  for (const m of rows) {
    const next = await saveMigration(tx, m, {
      state: 'cancelled',
      password_sealed: null,
      ended_at: now,
      end_reason: 'inbox_deleted',
      resume_state: null,
      attention_reason: null,
      attention_message: null,
      attention_retry_at: null,
    });
    await logActivity(tx, next, actorOf(actor), 'cancelled', { reason: 'inbox_deleted' });
    await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(tx.db, next.id)) });
    await tx.db.deleteFrom('jobs').where('unique_key', '=', `migration:${m.id}`).execute();
  }
  return rows.map((m) => m.id);
}
