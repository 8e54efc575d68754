// Mailbox migrations: the service functions behind the API (create, read, change, connect, test,
// scan, preview, start, pause, resume, cancel, retry, errors). Every change of state goes through
// `act`, which checks the state machine, records the activity log line and migration.updated in
// the same transaction, and makes sure the background worker runs when the new state needs it.

import net from 'node:net';
import { z } from 'zod';
import type { Access } from '../auth/access.js';
import { createEmailChannel } from '../channels/service.js';
import { channelsOfInbox, findWorkspaceChannel } from '../channels/store.js';
import { knownContactEmails } from '../contacts/imported.js';
import { normalizeAddress } from '../contacts/service.js';
import type { Ctx } from '../context.js';
import { checkLabels } from '../conversations/service.js';
import type { Db, ImapTlsMode, MailboxMigrationItemsTable } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { findLiveInbox } from '../inboxes/store.js';
import { isMember } from '../members/team.js';
import { iso, MINUTE } from '../platform/clock.js';
import { AppError, conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import { CONNECTION_TEST_WINDOW } from '../platform/rate-limit.js';
import { charCount } from '../platform/text.js';
import { folderLabelsOf, THREAD_MEMBER_STATUSES, threadItemsQuery } from './copy/copy.js';
import { importedStatus, labelsOfItem, SKIP_REASONS } from './copy/plan.js';
import { chooseFolders, isNeverRead } from './copy/scan.js';
import { teamAddressesOf } from './copy/team.js';
import { ensureWorker } from './copy/worker.js';
import { formatMigration } from './format.js';
import { removalCount } from './removal.js';
import { openSource, probeTransport, resolveServer, SourceError, sourceServerOf, type TestStep } from './sources/connect.js';
import type { HelpDeskReader } from './sources/helpdesk/reader.js';
import { type HelpDeskCredentials, helpDeskCredentialsOf, openHelpDeskReader } from './sources/helpdesk/source.js';
import { isHelpDesk, saveHelpDeskAccount, TICKETS_FOLDER } from './sources/helpdesk/store.js';
import { describeImapError } from './sources/imap.js';
import { detectProvider, findPreset, operatorSettings, PRESETS, providerConfigured } from './sources/presets.js';
import { isSignInProvider, notConfigured } from './sources/sign-in.js';
import { allowedActions, ENDED_STATES, type MigrationAction, requireAction, resumedFromAttention, stateError, WORKING_STATES } from './states.js';
import {
  actorOf,
  checkLogWindow,
  findMigration,
  getMigration,
  loadProgress,
  lockMigration,
  logActivity,
  type MigrationRow,
  recordMigrationUpdated,
  saveMigration,
} from './store.js';
import { switchingView } from './switching/service.js';
import { discardUpload } from './upload/service.js';

export const CLOSE_AFTER_DEFAULT_DAYS = 14;
export const PREVIEW_DEFAULT = 10;

export interface MigrationInput {
  provider?: string;
  source_address?: string | null;
  imap?: { host: string; port?: number; tls?: ImapTlsMode } | null;
  username?: string | null;
  inbox_id?: string | null;
  channel_id?: string | null;
  folders?: string[] | null;
  date_from?: string | null;
  date_to?: string | null;
  folder_labels?: Record<string, string | null>;
  team_members?: Record<string, string | null>;
  close_after_days?: number;
  skip_automatic?: boolean;
  keep_originals?: boolean;
}

const HOST = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

function checkHost(raw: string): string {
  const h = raw.trim().toLowerCase();
  if (!HOST.test(h) && !net.isIP(h.replace(/^\[|\]$/g, ''))) throw invalid(`imap.host is not a host name: ${JSON.stringify(raw)}`);
  return h;
}

function checkDate(raw: string | null | undefined, field: string): string | null | undefined {
  if (raw === undefined || raw === null) return raw;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || Number.isNaN(new Date(`${raw}T00:00:00Z`).getTime())) throw invalid(`${field} must be a date written YYYY-MM-DD`);
  return raw;
}

function address(raw: string, field: string): string {
  try {
    const a = normalizeAddress(raw);
    if (!/^[^\s@]+@[^\s@]+$/.test(a)) throw new Error();
    return a;
  } catch {
    throw invalid(`${field} is not an e-mail address: ${JSON.stringify(raw)}`);
  }
}

/**
 * The migration's inbox and channel: the channel must be an e-mail channel of that inbox. When only
 * the inbox is named, its e-mail channel for the mailbox's address is taken; when it has none, one
 * is to be made for that address (`createChannelFor`, by the caller in its transaction: see
 * `createChannelForMailbox`). Without an address, the inbox's first e-mail channel is taken.
 */
async function checkPlace(
  ctx: Pick<Ctx, 'db'>,
  workspaceId: string,
  inboxId: string | null | undefined,
  channelId: string | null | undefined,
  mailboxAddress: string | null,
) {
  let inbox = inboxId;
  let channel = channelId;
  let createChannelFor: string | null = null;
  if (channel) {
    const row = await findWorkspaceChannel(ctx.db, workspaceId, channel);
    if (!row) throw notFound(`channel ${channel}`);
    if (row.kind !== 'email') throw invalid('channel_id must name an e-mail channel');
    if (inbox && inbox !== row.inbox_id) throw invalid('channel_id must be a channel of inbox_id');
    inbox = row.inbox_id;
  }
  if (inbox) {
    const row = await findLiveInbox(ctx.db, workspaceId, inbox);
    if (!row) throw notFound(`inbox ${inbox}`);
    if (!channel) {
      const emailChannels = await channelsOfInbox(ctx.db, inbox, 'email');
      const forAddress = mailboxAddress ? emailChannels.find((c) => c.address === mailboxAddress) : undefined;
      channel = forAddress?.id ?? (mailboxAddress ? null : (emailChannels[0]?.id ?? null));
      if (!channel && mailboxAddress) createChannelFor = mailboxAddress;
    }
  }
  return { inbox_id: inbox ?? null, channel_id: channel ?? null, createChannelFor };
}

const NEW_CHANNEL_SMTP_NOTICE =
  'A new e-mail channel was made for this address. It has no SMTP account: set its SMTP server, user name and password in the panel (Settings › Inboxes and channels) before replies can be sent.';

/**
 * Makes the e-mail channel a migration needs for its address (no SMTP account) in the caller's
 * transaction, with a line in the activity log. What the answer says about it: `created_channel`.
 */
async function createChannelForMailbox(
  ctx: Ctx,
  tx: { db: Db; clock: Ctx['clock'] },
  m: Pick<MigrationRow, 'id' | 'workspace_id'>,
  inboxId: string,
  address: string,
  access: Access,
) {
  const channel = await createEmailChannel({ ...ctx, db: tx.db }, { workspaceId: m.workspace_id, inboxId, name: address, address });
  await logActivity(tx, m, actorOf(access), 'channel_created', { channel_id: channel.id, address });
  return { id: channel.id, address, smtp_configured: false, message: NEW_CHANNEL_SMTP_NOTICE };
}

async function checkTeam(ctx: Pick<Ctx, 'db'>, workspaceId: string, mapping: Record<string, string | null>): Promise<Record<string, string | null>> {
  const entries = Object.entries(mapping);
  if (entries.length > 200) throw invalid('team_members maps at most 200 addresses');
  const out: Record<string, string | null> = {};
  for (const [raw, personId] of entries) {
    const a = address(raw, 'a team_members address');
    if (personId !== null) {
      if (!(await isMember(ctx.db, workspaceId, personId))) throw invalid(`team_members: ${personId} is not a member of this workspace`);
    }
    out[a] = personId;
  }
  return out;
}

function checkFolderLabels(mapping: Record<string, string | null>): Record<string, string | null> {
  const entries = Object.entries(mapping);
  if (entries.length > 1000) throw invalid('folder_labels maps at most 1000 folders');
  const out: Record<string, string | null> = {};
  for (const [folder, label] of entries) {
    if (!folder || charCount(folder) > 1000) throw invalid('folder_labels: folder names are 1 to 1000 characters');
    out[folder] = label === null ? null : (checkLabels([label])[0] ?? null);
  }
  return out;
}

function checkFolders(folders: string[] | null): string[] | null {
  if (folders === null) return null;
  if (folders.length === 0 || folders.length > 1000) throw invalid('folders lists 1 to 1000 folders (null: the default folders)');
  for (const f of folders) if (!f || charCount(f) > 1000 || /[\u0000\r\n]/.test(f)) throw invalid('folder names are 1 to 1000 characters on one line');
  return [...new Set(folders)];
}

/** The columns an input sets (validated). `plan` says whether the copy must be planned again. */
async function columnsOf(ctx: Pick<Ctx, 'db' | 'config'>, workspaceId: string, input: MigrationInput, current?: MigrationRow) {
  const set: Partial<MigrationRow> = {};
  let mailboxChanged = false;
  let planChanged = false;
  if (input.provider !== undefined) {
    const preset = findPreset(input.provider);
    if (!preset) throw invalid(`unknown provider ${JSON.stringify(input.provider)}; see GET /v1/migrations/presets`);
    if (!providerConfigured(preset, ctx.config)) throw notConfigured(preset);
    set.provider = preset.id;
    mailboxChanged ||= current?.provider !== preset.id;
  }
  if (input.source_address !== undefined) {
    set.source_address = input.source_address === null ? null : address(input.source_address, 'source_address');
    mailboxChanged ||= current?.source_address !== set.source_address;
  }
  if (input.imap !== undefined) {
    if (input.imap === null) Object.assign(set, { imap_host: null, imap_port: null, imap_tls: null });
    else {
      const tls = input.imap.tls ?? 'tls';
      if (input.imap.port !== undefined && (!Number.isInteger(input.imap.port) || input.imap.port < 1 || input.imap.port > 65535))
        throw invalid('imap.port must be 1 to 65535');
      Object.assign(set, { imap_host: checkHost(input.imap.host), imap_port: input.imap.port ?? (tls === 'tls' ? 993 : 143), imap_tls: tls });
    }
    mailboxChanged = true;
  }
  if (input.username !== undefined) {
    const u = input.username === null ? null : input.username.trim();
    if (u !== null && (!u || charCount(u) > 320 || /[\u0000-\u001f]/.test(u))) throw invalid('username must be 1 to 320 printable characters');
    set.username = u;
    mailboxChanged ||= current?.username !== u;
  }
  let createChannelFor: string | null = null;
  if (input.inbox_id !== undefined || input.channel_id !== undefined) {
    const mailboxAddress = set.source_address !== undefined ? set.source_address : (current?.source_address ?? null);
    const place = await checkPlace(
      ctx,
      workspaceId,
      input.inbox_id === undefined ? current?.inbox_id : input.inbox_id,
      input.channel_id === undefined ? (input.inbox_id !== undefined ? undefined : current?.channel_id) : input.channel_id,
      mailboxAddress,
    );
    set.inbox_id = place.inbox_id;
    set.channel_id = place.channel_id;
    createChannelFor = place.createChannelFor;
    planChanged ||= current?.inbox_id !== place.inbox_id || current?.channel_id !== place.channel_id;
  }
  if (input.folders !== undefined) {
    set.folders = input.folders === null ? null : JSON.stringify(checkFolders(input.folders));
    planChanged = true;
  }
  if (input.date_from !== undefined) {
    set.date_from = checkDate(input.date_from, 'date_from') ?? null;
    planChanged = true;
  }
  if (input.date_to !== undefined) {
    set.date_to = checkDate(input.date_to, 'date_to') ?? null;
    planChanged = true;
  }
  const from = set.date_from !== undefined ? set.date_from : current?.date_from;
  const to = set.date_to !== undefined ? set.date_to : current?.date_to;
  if (from && to && from > to) throw invalid('date_from must not be after date_to');
  if (input.folder_labels !== undefined) {
    set.folder_labels = JSON.stringify(checkFolderLabels(input.folder_labels));
    planChanged = true;
  }
  if (input.team_members !== undefined) {
    set.team_members = JSON.stringify(await checkTeam(ctx, workspaceId, input.team_members));
    planChanged = true;
  }
  if (input.close_after_days !== undefined) {
    if (!Number.isInteger(input.close_after_days) || input.close_after_days < 0 || input.close_after_days > 3650)
      throw invalid('close_after_days must be 0 to 3650');
    set.close_after_days = input.close_after_days;
    planChanged = true;
  }
  if (input.skip_automatic !== undefined) {
    set.skip_automatic = input.skip_automatic ? 1 : 0;
    planChanged = true;
  }
  if (input.keep_originals !== undefined) {
    set.keep_originals = input.keep_originals ? 1 : 0;
    planChanged = true;
  }
  return { set, mailboxChanged, planChanged: planChanged || mailboxChanged, createChannelFor };
}

async function view(ctx: Pick<Ctx, 'db' | 'config'>, m: MigrationRow) {
  return { ...formatMigration(m, await loadProgress(ctx.db, m.id)), ...(await switchingView(ctx, m, (r) => removalCount(ctx.db, r))) };
}

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
export async function previewMigration(ctx: Ctx, access: Access, id: string, limit = PREVIEW_DEFAULT) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  requireAction(m, 'preview');
  const threads = await ctx.db
    .selectFrom('mailbox_migration_threads')
    .selectAll()
    .where('migration_id', '=', m.id)
    .where('status', 'in', ['planned', 'copied'])
    .orderBy('newest_at', 'desc')
    .orderBy('thread_key')
    .limit(limit)
    .execute();
  const keys = threads.map((t) => t.thread_key);
  const items = keys.length
    ? (
        await threadItemsQuery(ctx.db, m.id, keys)
          .select(['thread_key', 'folder', 'gmail_labels', 'sent_at', 'from_address', 'from_name', 'subject', 'team', 'status', 'size'])
          .execute()
      ).filter((i) => THREAD_MEMBER_STATUSES.has(i.status))
    : [];
  const labelOf = await folderLabelsOf(ctx, m);
  const mapping = JSON.parse(m.folder_labels) as Record<string, string | null>;
  const team = await teamAddressesOf(ctx, m);
  const customers = threads.map((t) => t.customer_address).filter((a): a is string => !!a);
  const existing = await knownContactEmails(ctx.db, m.workspace_id, customers);
  const now = ctx.clock.now();
  return {
    data: threads.map((t) => {
      const own = items.filter((i) => i.thread_key === t.thread_key && i.status !== 'duplicate');
      const last = own[own.length - 1];
      const labels = [...new Set(items.filter((i) => i.thread_key === t.thread_key).flatMap((i) => labelsOfItem(i, labelOf, mapping)))].sort();
      return {
        subject: t.subject,
        contact: { email: t.customer_address, name: t.customer_name, exists: t.customer_address ? existing.has(t.customer_address) : false },
        status: last
          ? importedStatus({ lastMessageAt: new Date(last.sent_at), teamWroteLast: last.team === 1, closeAfterDays: m.close_after_days, now })
          : 'closed',
        imported: true,
        labels,
        copied: t.status === 'copied',
        messages: own.map((i) => ({
          direction: i.team ? 'out' : 'in',
          from: { name: i.from_name, address: i.from_address },
          author_member_id: i.team && i.from_address ? (team.members.get(i.from_address) ?? null) : null,
          subject: i.subject,
          sent_at: i.sent_at,
          size: Number(i.size),
        })),
        first_message_at: own[0]?.sent_at ?? null,
        last_message_at: last?.sent_at ?? null,
      };
    }),
  };
}

const errorCursor = z.string();

/** Messages that failed (with the reason), and why the migration needs attention, if it does. */
export async function listErrors(ctx: Pick<Ctx, 'db'>, access: Access, id: string, page: { limit?: number; cursor?: string }) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  const limit = page.limit ?? 50;
  const after = decodeCursor(page.cursor, errorCursor);
  let q = ctx.db.selectFrom('mailbox_migration_items').selectAll().where('migration_id', '=', m.id).where('status', '=', 'failed');
  if (after) q = q.where('source_key', '>', after);
  const rows = await q
    .orderBy('source_key')
    .limit(limit + 1)
    .execute();
  const blocked = await ctx.db
    .selectFrom('mailbox_migration_log')
    .select(['at', 'detail'])
    .where('migration_id', '=', m.id)
    .where('action', '=', 'command_blocked')
    .orderBy('id', 'desc')
    .limit(20)
    .execute();
  const page_ = toPage(
    rows,
    limit,
    (r) => r.source_key,
    (r: MailboxMigrationItemsTable) => ({
      source: { folder: r.folder, uid: r.uid === null ? null : Number(r.uid), key: r.source_key },
      message_id_header: r.rfc_id,
      subject: r.subject,
      sent_at: r.sent_at,
      error: r.error,
      attempts: r.attempts,
    }),
  );
  return {
    ...page_,
    attention: m.state === 'needs_attention' ? { reason: m.attention_reason, message: m.attention_message, retry_at: m.attention_retry_at } : null,
    blocked_commands: blocked.map((b) => ({ at: b.at, ...(b.detail ? (JSON.parse(b.detail) as Record<string, unknown>) : {}) })),
  };
}

export async function listActivity(ctx: Pick<Ctx, 'db'>, access: Access, id: string, page: { limit?: number; cursor?: string }) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  const limit = page.limit ?? 50;
  const before = decodeCursor(page.cursor, z.string());
  let q = ctx.db.selectFrom('mailbox_migration_log').selectAll().where('migration_id', '=', m.id);
  if (before) q = q.where('id', '<', before);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return toPage(
    rows,
    limit,
    (r) => r.id,
    (r) => ({
      id: r.id,
      at: r.at,
      actor: { type: r.actor_type, id: r.actor_id },
      action: r.action,
      detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null,
    }),
  );
}

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
