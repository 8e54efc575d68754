import { unfinishedBroadcastsThrough } from '../broadcasts/store.js';
import type { Ctx } from '../context.js';
import type { ChannelGrantsTable, Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents, recordEvent, recordSignal } from '../events/service.js';
import { unfinishedMigrationsThrough } from '../mailbox-migration/store.js';
import { normalizeEmail } from '../people/service.js';
import { type Clock, iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId, randomText } from '../platform/ids.js';
import { charCount } from '../platform/text.js';
import { type ChannelRow, findWorkspaceChannel } from './store.js';

export type { ChannelRow } from './store.js';

type C = Pick<Ctx, 'db' | 'clock' | 'sealer' | 'config' | 'hub'>;

export const PUBLIC_KEY_PREFIX = 'svc_pk_';
export type TlsMode = 'starttls' | 'tls' | 'none';
export type SmtpAuth = 'password' | 'google' | 'microsoft';
/** The SMTP servers of the sign-in providers (AUTH XOAUTH2 after STARTTLS on 587; src/mail/transport.ts). */
export const SIGN_IN_SMTP_HOST = { google: 'smtp.gmail.com', microsoft: 'smtp.office365.com' } as const;
const DEFAULT_PORT: Record<TlsMode, number> = { tls: 465, starttls: 587, none: 25 };

function checkName(name: string): string {
  const n = name.trim();
  if (!n || charCount(n) > 200) throw invalid('channel name must be 1 to 200 characters');
  return n;
}

function checkHost(host: string): string {
  const h = host.trim().toLowerCase();
  if (!/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(h) && !/^\[?[0-9a-f:.]+\]?$/.test(h)) {
    throw invalid(`not a host name: ${JSON.stringify(host)}`);
  }
  return h;
}

export function checkOrigin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid(`not an origin: ${JSON.stringify(raw)}; expected for example https://www.example.com`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin === 'null' || raw.trim().replace(/\/$/, '') !== url.origin) {
    throw invalid(`not an origin: ${JSON.stringify(raw)}; expected scheme, host and optional port only`);
  }
  return url.origin;
}

async function addressTaken(ctx: C, address: string): Promise<boolean> {
  const row = await ctx.db
    .selectFrom('channels')
    .select('id')
    .where((eb) => eb.or([eb('address', '=', address), eb('forwarding_address', '=', address)]))
    .executeTakeFirst();
  return !!row;
}

export function newForwardingAddress(domain: string): string {
  return `in-${randomText(16)}@${domain}`;
}

export interface NewEmailChannel {
  workspaceId: string;
  inboxId: string;
  name: string;
  address: string;
  displayName?: string;
  fromAddress?: string;
  smtpHost?: string;
  smtpPort?: number;
  tls?: TlsMode;
  smtpUsername?: string;
  smtpPassword?: string;
  /** google or microsoft: the channel sends with that sign-in (no SMTP fields; src/mail-accounts keeps the grant). */
  smtpAuth?: SmtpAuth;
}

/** The SMTP columns of a channel that sends with a sign-in: the provider's server; the user is the signed-in account. */
function signInSmtp(provider: 'google' | 'microsoft', username: string | null): Partial<ChannelRow> {
  return {
    smtp_auth: provider,
    smtp_host: SIGN_IN_SMTP_HOST[provider],
    smtp_port: 587,
    smtp_tls: 'starttls',
    smtp_username: username,
    smtp_password_sealed: null,
  };
}

function refuseSmtpFieldsWithSignIn(fields: Record<string, unknown>): void {
  const given = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
  if (given.length) throw invalid(`smtp_auth google or microsoft sends with the sign-in: do not set ${given.join(', ')} with it`);
}

export async function createEmailChannel(ctx: C, input: NewEmailChannel): Promise<ChannelRow> {
  const address = normalizeEmail(input.address);
  if (await addressTaken(ctx, address)) throw conflict(`the address ${address} is already used by a channel`);
  if (input.smtpPort !== undefined && (!Number.isInteger(input.smtpPort) || input.smtpPort < 1 || input.smtpPort > 65535)) {
    throw invalid('SMTP port must be a whole number from 1 to 65535');
  }
  if (input.tls && !(input.tls in DEFAULT_PORT)) throw invalid('TLS mode must be starttls, tls or none');
  const signIn = input.smtpAuth === 'google' || input.smtpAuth === 'microsoft' ? input.smtpAuth : undefined;
  if (signIn)
    refuseSmtpFieldsWithSignIn({
      smtp_host: input.smtpHost,
      smtp_port: input.smtpPort,
      tls: input.tls,
      smtp_username: input.smtpUsername,
      smtp_password: input.smtpPassword,
    });
  const hasSmtp = input.smtpHost !== undefined;
  if (!hasSmtp && (input.smtpPort !== undefined || input.tls || input.smtpUsername || input.smtpPassword !== undefined)) {
    throw invalid('SMTP port, TLS mode, user name and password need an SMTP host');
  }
  const tls: TlsMode | null = hasSmtp ? (input.tls ?? 'starttls') : null;
  const now = iso(ctx.clock.now());
  const channel: ChannelRow = {
    ...emptyChannel(),
    id: newId('ch'),
    workspace_id: input.workspaceId,
    inbox_id: input.inboxId,
    kind: 'email',
    name: checkName(input.name),
    address,
    display_name: input.displayName?.trim() || null,
    from_address: input.fromAddress ? normalizeEmail(input.fromAddress) : null,
    smtp_host: hasSmtp ? checkHost(input.smtpHost!) : null,
    smtp_port: hasSmtp ? (input.smtpPort ?? DEFAULT_PORT[tls!]) : null,
    smtp_tls: tls,
    smtp_username: input.smtpUsername?.trim() || null,
    smtp_password_sealed: input.smtpPassword ? ctx.sealer.seal(input.smtpPassword) : null,
    forwarding_address: ctx.config.forwardingDomain ? newForwardingAddress(ctx.config.forwardingDomain) : null,
    ...(signIn ? signInSmtp(signIn, null) : {}),
    created_at: now,
    updated_at: now,
  };
  await saveNewChannel(ctx, channel);
  return channel;
}

export interface NewChatChannel {
  workspaceId: string;
  inboxId: string;
  name: string;
  origins: string[];
  allowAnonymous?: boolean;
  askEmailOffline?: boolean;
  greeting?: string;
}

export async function createChatChannel(ctx: C, input: NewChatChannel): Promise<ChannelRow> {
  if (input.origins.length === 0) throw invalid('a chat channel needs at least one origin');
  const origins = [...new Set(input.origins.map(checkOrigin))];
  if (input.greeting !== undefined && charCount(input.greeting) > 2000) throw invalid('greeting must be at most 2000 characters');
  const now = iso(ctx.clock.now());
  const channel: ChannelRow = {
    ...emptyChannel(),
    id: newId('ch'),
    workspace_id: input.workspaceId,
    inbox_id: input.inboxId,
    kind: 'chat',
    name: checkName(input.name),
    public_key: PUBLIC_KEY_PREFIX + randomText(24),
    origins: JSON.stringify(origins),
    allow_anonymous: input.allowAnonymous ? 1 : 0,
    ask_email_offline: input.askEmailOffline === false ? 0 : 1,
    greeting: input.greeting ?? null,
    created_at: now,
    updated_at: now,
  };
  await saveNewChannel(ctx, channel);
  return channel;
}

/** Inserts a new channel with its `channel.saved` signal (the reactions store their work with it). */
async function saveNewChannel(ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>, channel: ChannelRow): Promise<void> {
  await inTransaction(ctx.db, async (trx) => {
    await trx.insertInto('channels').values(channel).execute();
    await recordSignal({ db: trx, clock: ctx.clock }, 'channel.saved', { channelId: channel.id });
  });
  announceEvents(ctx);
}

function emptyChannel(): Omit<ChannelRow, 'id' | 'workspace_id' | 'inbox_id' | 'kind' | 'name' | 'created_at' | 'updated_at'> {
  return {
    address: null,
    display_name: null,
    from_address: null,
    smtp_host: null,
    smtp_port: null,
    smtp_tls: null,
    smtp_username: null,
    smtp_password_sealed: null,
    smtp_auth: 'password',
    forwarding_address: null,
    public_key: null,
    origins: null,
    allow_anonymous: null,
    ask_email_offline: null,
    greeting: null,
  };
}

export async function listChannels(ctx: Pick<Ctx, 'db'>, workspaceId: string, inboxId?: string): Promise<ChannelRow[]> {
  let q = ctx.db.selectFrom('channels').selectAll().where('workspace_id', '=', workspaceId);
  if (inboxId) q = q.where('inbox_id', '=', inboxId);
  return q.orderBy('id').execute();
}

export async function getChannel(ctx: Pick<Ctx, 'db'>, workspaceId: string, id: string): Promise<ChannelRow> {
  const row = await findWorkspaceChannel(ctx.db, workspaceId, id);
  if (!row) throw notFound('channel');
  return row;
}

/** The forwarding address that works now: only on the server's current SVC_FORWARDING_DOMAIN. */
export function activeForwardingAddress(ch: ChannelRow, forwardingDomain: string | undefined): string | null {
  return forwardingDomain && ch.forwarding_address?.endsWith(`@${forwardingDomain}`) ? ch.forwarding_address : null;
}

/**
 * What the API and the list command show: secrets only as "set or not set". With `config`, the
 * forwarding address is shown only while it works (see activeForwardingAddress).
 */
export function formatChannel(ch: ChannelRow, config?: Pick<Ctx['config'], 'forwardingDomain'>, grant?: ChannelGrantsTable) {
  const base = { id: ch.id, kind: ch.kind, inbox_id: ch.inbox_id, name: ch.name, created_at: ch.created_at, updated_at: ch.updated_at };
  if (ch.kind === 'chat') {
    return {
      ...base,
      public_key: ch.public_key,
      origins: JSON.parse(ch.origins ?? '[]') as string[],
      allow_anonymous: ch.allow_anonymous === 1,
      ask_email_offline: ch.ask_email_offline === 1,
      greeting: ch.greeting,
    };
  }
  return {
    ...base,
    address: ch.address,
    display_name: ch.display_name,
    from_address: ch.from_address,
    forwarding_address: config ? activeForwardingAddress(ch, config.forwardingDomain) : ch.forwarding_address,
    smtp: ch.smtp_host
      ? { host: ch.smtp_host, port: ch.smtp_port, tls: ch.smtp_tls, username: ch.smtp_username, password_set: ch.smtp_password_sealed !== null }
      : null,
    smtp_auth: ch.smtp_auth,
    // The channel's Google or Microsoft sign-in (src/mail-accounts), never a token.
    signed_in: grant
      ? {
          provider: grant.provider,
          account: grant.account,
          state: grant.state,
          error: grant.error,
          revoked_at: grant.revoked_at,
          connected_at: grant.created_at,
        }
      : null,
    sign_in_required: ch.smtp_auth !== 'password' && (!grant || grant.provider !== ch.smtp_auth || grant.state !== 'ok'),
  };
}

/** In-process signal after channels were deleted: open widget sockets of their sessions close at once. */
export const CHANNELS_DELETED = 'channels-deleted';
export type ChannelsDeleted = { channelIds: string[] };

export interface ChannelPatch {
  name?: string;
  // e-mail channels; null clears (smtpHost: null removes the whole SMTP account, password included)
  displayName?: string | null;
  fromAddress?: string | null;
  smtpHost?: string | null;
  smtpPort?: number;
  tls?: TlsMode;
  smtpUsername?: string | null;
  /** A new password is sealed; null deletes the stored one; "" is refused (say null). */
  smtpPassword?: string | null;
  /** google or microsoft: send with that sign-in (the SMTP fields are the provider's); password: the smtp_* fields again. */
  smtpAuth?: SmtpAuth;
  // chat channels
  origins?: string[];
  greeting?: string | null;
  allowAnonymous?: boolean;
  askEmailOffline?: boolean;
}

const EMAIL_FIELDS = ['displayName', 'fromAddress', 'smtpHost', 'smtpPort', 'tls', 'smtpUsername', 'smtpPassword', 'smtpAuth'] as const;
const CHAT_FIELDS = ['origins', 'greeting', 'allowAnonymous', 'askEmailOffline'] as const;
const API_NAMES: Record<(typeof EMAIL_FIELDS)[number] | (typeof CHAT_FIELDS)[number], string> = {
  displayName: 'display_name',
  fromAddress: 'from_address',
  smtpHost: 'smtp_host',
  smtpPort: 'smtp_port',
  tls: 'tls',
  smtpUsername: 'smtp_username',
  smtpPassword: 'smtp_password',
  smtpAuth: 'smtp_auth',
  origins: 'origins',
  greeting: 'greeting',
  allowAnonymous: 'allow_anonymous',
  askEmailOffline: 'ask_email_offline',
};

/** The columns a patch sets on this channel; every field checked before anything is written. */
function channelChanges(ctx: Pick<Ctx, 'sealer'>, saved: ChannelRow, patch: ChannelPatch): Partial<ChannelRow> {
  let current = saved;
  if (Object.values(patch).every((v) => v === undefined)) throw invalid('nothing to change: name at least one field of the channel');
  const foreign = (current.kind === 'email' ? CHAT_FIELDS : EMAIL_FIELDS).filter((f) => patch[f] !== undefined);
  if (foreign.length)
    throw invalid(
      `${foreign.map((f) => API_NAMES[f]).join(', ')} ${foreign.length > 1 ? 'are fields' : 'is a field'} of ${current.kind === 'email' ? 'chat' : 'e-mail'} channels, not of this ${current.kind} channel`,
    );
  const set: Partial<ChannelRow> = {};
  if (patch.name !== undefined) set.name = checkName(patch.name);
  if (current.kind === 'chat') {
    if (patch.origins !== undefined) {
      if (patch.origins.length === 0) throw invalid('a chat channel needs at least one origin');
      set.origins = JSON.stringify([...new Set(patch.origins.map(checkOrigin))]);
    }
    if (patch.greeting !== undefined) {
      if (patch.greeting !== null && charCount(patch.greeting) > 2000) throw invalid('greeting must be at most 2000 characters');
      set.greeting = patch.greeting;
    }
    if (patch.allowAnonymous !== undefined) set.allow_anonymous = patch.allowAnonymous ? 1 : 0;
    if (patch.askEmailOffline !== undefined) set.ask_email_offline = patch.askEmailOffline ? 1 : 0;
    return set;
  }
  if (patch.displayName !== undefined) set.display_name = patch.displayName?.trim() || null;
  if (patch.fromAddress !== undefined) set.from_address = patch.fromAddress === null || !patch.fromAddress.trim() ? null : normalizeEmail(patch.fromAddress);
  if (patch.smtpPassword === '') throw invalid('smtp_password must not be empty; send null to delete the stored password');
  if (patch.smtpPassword !== undefined && patch.smtpPassword !== null && patch.smtpPassword.length > 2000)
    throw invalid('smtp_password must be at most 2000 characters');
  if (patch.smtpPort !== undefined && (!Number.isInteger(patch.smtpPort) || patch.smtpPort < 1 || patch.smtpPort > 65535)) {
    throw invalid('SMTP port must be a whole number from 1 to 65535');
  }
  if (patch.tls !== undefined && !(patch.tls in DEFAULT_PORT)) throw invalid('TLS mode must be starttls, tls or none');
  const smtpFields = {
    smtp_host: patch.smtpHost,
    smtp_port: patch.smtpPort,
    tls: patch.tls,
    smtp_username: patch.smtpUsername,
    smtp_password: patch.smtpPassword,
  };
  if (patch.smtpAuth === 'google' || patch.smtpAuth === 'microsoft') {
    refuseSmtpFieldsWithSignIn(smtpFields);
    if (current.smtp_auth === patch.smtpAuth) return set;
    return Object.assign(set, signInSmtp(patch.smtpAuth, null));
  }
  if (current.smtp_auth !== 'password') {
    if (patch.smtpAuth !== 'password') {
      if (Object.values(smtpFields).some((v) => v !== undefined))
        throw invalid(
          `the channel sends with its ${current.smtp_auth === 'google' ? 'Google' : 'Microsoft'} sign-in: send smtp_auth "password" with the SMTP fields to use a password instead`,
        );
      return set;
    }
    // Back to a password: the provider's server goes unless the patch names one.
    set.smtp_auth = 'password';
    Object.assign(set, { smtp_host: null, smtp_port: null, smtp_tls: null, smtp_username: null, smtp_password_sealed: null });
    current = { ...current, smtp_host: null, smtp_port: null, smtp_tls: null, smtp_username: null, smtp_password_sealed: null };
    if (patch.smtpHost === undefined) return set;
  }
  if (patch.smtpHost === null) {
    if (patch.smtpPort !== undefined || patch.tls !== undefined || patch.smtpUsername || patch.smtpPassword) {
      throw invalid('smtp_host null removes the SMTP account; do not set its port, TLS mode, user name or password with it');
    }
    Object.assign(set, { smtp_host: null, smtp_port: null, smtp_tls: null, smtp_username: null, smtp_password_sealed: null });
    return set;
  }
  const host = patch.smtpHost !== undefined ? checkHost(patch.smtpHost) : current.smtp_host;
  if (!host) {
    if (patch.smtpPort !== undefined || patch.tls !== undefined || patch.smtpUsername || patch.smtpPassword) {
      throw invalid('SMTP port, TLS mode, user name and password need an SMTP host (set smtp_host too)');
    }
    if (patch.smtpUsername === null || patch.smtpPassword === null) Object.assign(set, { smtp_username: null, smtp_password_sealed: null });
    return set;
  }
  if (patch.smtpHost !== undefined) set.smtp_host = host;
  const tls: TlsMode = patch.tls ?? current.smtp_tls ?? 'starttls';
  if (tls !== current.smtp_tls) set.smtp_tls = tls;
  if (patch.smtpPort !== undefined) set.smtp_port = patch.smtpPort;
  // A port left at the old mode's default follows the new mode (587 → 465 when switching to tls).
  else if (current.smtp_port === null || (current.smtp_tls && current.smtp_port === DEFAULT_PORT[current.smtp_tls] && tls !== current.smtp_tls))
    set.smtp_port = DEFAULT_PORT[tls];
  if (patch.smtpUsername !== undefined) set.smtp_username = patch.smtpUsername?.trim() || null;
  if (patch.smtpPassword !== undefined) set.smtp_password_sealed = patch.smtpPassword === null ? null : ctx.sealer.seal(patch.smtpPassword);
  return set;
}

/**
 * Changes a channel (the fields of its kind). In one transaction: the change, a `channel.updated`
 * event (realtime only; never the password, only that it changed) and the `channel.saved` signal
 * (its reactions store their work, such as the mail-provider tenant upkeep, in the transaction).
 */
export async function updateChannel(
  ctx: Pick<Ctx, 'db' | 'clock' | 'sealer' | 'config' | 'hub'>,
  workspaceId: string,
  channelId: string,
  patch: ChannelPatch,
): Promise<ChannelRow> {
  const result = await ctx.db.transaction().execute(async (trx) => {
    const current = await getChannel({ db: trx }, workspaceId, channelId);
    const set = channelChanges(ctx, current, patch);
    // A password given again counts as a change (it is sealed anew, so the text always differs).
    const changed = (Object.keys(set) as (keyof ChannelRow)[]).filter((k) =>
      k === 'smtp_password_sealed' ? set[k] !== null || current[k] !== null : set[k] !== current[k],
    );
    if (changed.length === 0) return { channel: current, changed };
    const next: ChannelRow = { ...current, ...set, updated_at: iso(ctx.clock.now()) };
    await trx
      .updateTable('channels')
      .set({ ...set, updated_at: next.updated_at })
      .where('id', '=', current.id)
      .execute();
    await recordChannelChange({ db: trx, clock: ctx.clock }, current, 'channel.updated', {
      channel: formatChannel(next, ctx.config),
      changed: changed.map((k) => (k === 'smtp_password_sealed' ? 'smtp_password' : k === 'smtp_tls' ? 'tls' : k)),
    });
    return { channel: next, changed };
  });
  if (result.changed.length) announceEvents(ctx);
  return result.channel;
}

/**
 * Deletes a channel at once: mail to its addresses gets 550, its chat key and visitor sessions are
 * refused, its conversations stay in the inbox (without a channel). Refused with 409 `channel_in_use`
 * while a broadcast that has not finished (scheduled, sending or paused) sends through it or a
 * migration that has not ended moves mail into it (its forwarding address is the new route).
 */
export async function deleteChannel(ctx: Pick<Ctx, 'db' | 'clock' | 'config' | 'hub' | 'log'>, workspaceId: string, channelId: string): Promise<ChannelRow> {
  const channel = await ctx.db.transaction().execute(async (trx) => {
    const current = await getChannel({ db: trx }, workspaceId, channelId);
    const broadcasts = await unfinishedBroadcastsThrough(trx, [current.id]);
    const migrations = await unfinishedMigrationsThrough(trx, current.id);
    if (broadcasts.length || migrations.length) {
      const uses = [
        broadcasts.length ? `broadcasts ${broadcasts.join(', ')} send through it` : '',
        migrations.length ? `migrations ${migrations.join(', ')} move mail into it` : '',
      ]
        .filter(Boolean)
        .join('; ');
      throw conflict(`the channel is in use: ${uses}; cancel them (or let them finish) first`, 'channel_in_use', {
        broadcast_ids: broadcasts,
        migration_ids: migrations,
      });
    }
    await trx.deleteFrom('channels').where('id', '=', current.id).execute();
    await recordChannelChange({ db: trx, clock: ctx.clock }, current, 'channel.deleted', {
      channel: { id: current.id, kind: current.kind, inbox_id: current.inbox_id, name: current.name },
    });
    return current;
  });
  ctx.log.info('channel deleted', { workspace_id: workspaceId, channel_id: channel.id, kind: channel.kind });
  ctx.hub.emit(CHANNELS_DELETED, { channelIds: [channel.id] } satisfies ChannelsDeleted);
  announceEvents(ctx);
  return channel;
}

/**
 * In the transaction of a change to an existing channel: its event (shown to the team, never sent as
 * a webhook) and the channel.saved signal naming where it sent from before the change.
 */
async function recordChannelChange(
  tx: { db: Db; clock: Clock },
  before: ChannelRow,
  type: 'channel.updated' | 'channel.deleted',
  data: Record<string, unknown>,
): Promise<void> {
  await recordEvent(tx, { workspaceId: before.workspace_id, inboxId: before.inbox_id, type, occurredAt: tx.clock.now(), data, webhook: false });
  await recordSignal(tx, 'channel.saved', { channelId: before.id, former: { inboxId: before.inbox_id, smtpHost: before.smtp_host } });
}

/** After a sign-in with the provider the channel sends with: its SMTP user is the signed-in account (the XOAUTH2 user). */
export async function setSignInAccount(db: Db, channelId: string, provider: 'google' | 'microsoft', account: string): Promise<void> {
  await db.updateTable('channels').set({ smtp_username: account }).where('id', '=', channelId).where('smtp_auth', '=', provider).execute();
}

/** Every address the workspace's e-mail channels send or receive as (lower case). */
export async function channelAddresses(db: Db, workspaceId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('channels')
    .select(['address', 'from_address', 'forwarding_address'])
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'email')
    .execute();
  const out = new Set<string>();
  for (const r of rows) for (const a of [r.address, r.from_address, r.forwarding_address]) if (a) out.add(a.toLowerCase());
  return out;
}
