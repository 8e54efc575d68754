import type { Ctx } from '../context.js';
import type { ChannelsTable } from '../db/schema.js';
import { normalizeEmail } from '../people/service.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId, randomText } from '../platform/ids.js';

export type ChannelRow = ChannelsTable;
type C = Pick<Ctx, 'db' | 'clock' | 'sealer' | 'config' | 'hub'>;

export const PUBLIC_KEY_PREFIX = 'svc_pk_';
export type TlsMode = 'starttls' | 'tls' | 'none';
const DEFAULT_PORT: Record<TlsMode, number> = { tls: 465, starttls: 587, none: 25 };

function checkName(name: string): string {
  const n = name.trim();
  if (!n || n.length > 200) throw invalid('channel name must be 1 to 200 characters');
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
}

export async function createEmailChannel(ctx: C, input: NewEmailChannel): Promise<ChannelRow> {
  const address = normalizeEmail(input.address);
  if (await addressTaken(ctx, address)) throw conflict(`the address ${address} is already used by a channel`);
  if (input.smtpPort !== undefined && (!Number.isInteger(input.smtpPort) || input.smtpPort < 1 || input.smtpPort > 65535)) {
    throw invalid('SMTP port must be a whole number from 1 to 65535');
  }
  if (input.tls && !(input.tls in DEFAULT_PORT)) throw invalid('TLS mode must be starttls, tls or none');
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
    created_at: now,
    updated_at: now,
  };
  await ctx.db.insertInto('channels').values(channel).execute();
  ctx.hub.emit('channel.saved', { channelId: channel.id });
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
  if (input.greeting !== undefined && input.greeting.length > 2000) throw invalid('greeting must be at most 2000 characters');
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
  await ctx.db.insertInto('channels').values(channel).execute();
  ctx.hub.emit('channel.saved', { channelId: channel.id });
  return channel;
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
  const row = await ctx.db.selectFrom('channels').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
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
export function formatChannel(ch: ChannelRow, config?: Pick<Ctx['config'], 'forwardingDomain'>) {
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
  };
}
