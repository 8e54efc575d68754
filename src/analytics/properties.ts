// Analytics properties (the websites counted), a workspace's monthly event limit and its usage.
// Operator commands, the API and the ingestion all call these.
import { domainToASCII } from 'node:url';
import { findWorkspaceChannel } from '../channels/store.js';
import type { Ctx } from '../context.js';
import type { AnalyticsPropertiesTable, Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';

export type PropertyRow = AnalyticsPropertiesTable;
type C = Pick<Ctx, 'db' | 'clock'>;

export const MAX_PROPERTIES_PER_WORKSPACE = 100;
export const MAX_PROPERTY_NAME_CHARS = 200;

/**
 * A website's host name as stored: lower case, ASCII (punycode), without "www.". Refused: schemes,
 * paths, ports, IP addresses, localhost and names without a dot (pages there are never counted).
 */
export function checkDomain(raw: string): string {
  const text = raw.trim().toLowerCase().replace(/\.$/, '');
  const bad = () => invalid(`not a domain: ${JSON.stringify(raw)}; expected a host name such as example.com`);
  if (!text || text.length > 253 || /[\s/:?#@*\\[\]]/.test(text)) throw bad();
  const ascii = domainToASCII(text);
  if (!ascii) throw bad();
  const host = ascii.replace(/^www\./, '');
  const labels = host.split('.');
  if (labels.length < 2) throw bad();
  for (const l of labels) if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(l)) throw bad();
  if (/^\d+$/.test(labels.at(-1)!)) throw bad(); // an IPv4 address
  if (host.endsWith('.localhost') || host.endsWith('.local')) throw bad();
  return host;
}

function checkName(name: string | undefined, domain: string): string {
  const n = (name ?? domain).trim();
  if (!n || n.length > MAX_PROPERTY_NAME_CHARS || /[\r\n]/.test(n)) throw invalid(`name must be 1 to ${MAX_PROPERTY_NAME_CHARS} characters on one line`);
  return n;
}

async function checkChatChannel(db: Db, workspaceId: string, channelId: string | null | undefined): Promise<string | null> {
  if (!channelId) return null;
  const ch = await findWorkspaceChannel(db, workspaceId, channelId);
  if (!ch) throw invalid(`no channel ${JSON.stringify(channelId)} in this workspace`);
  if (ch.kind !== 'chat') throw invalid(`channel ${channelId} is not a chat channel`);
  return ch.id;
}

export interface NewProperty {
  workspaceId: string;
  domain: string;
  name?: string;
  subdomains?: boolean;
  chatChannelId?: string | null;
}

export async function createProperty(ctx: C, input: NewProperty): Promise<PropertyRow> {
  const domain = checkDomain(input.domain);
  const name = checkName(input.name, domain);
  return inTransaction(ctx.db, async (trx) => {
    const chat = await checkChatChannel(trx, input.workspaceId, input.chatChannelId);
    const count = await trx
      .selectFrom('analytics_properties')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', input.workspaceId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_PROPERTIES_PER_WORKSPACE) throw conflict(`a workspace has at most ${MAX_PROPERTIES_PER_WORKSPACE} analytics properties`);
    const taken = await trx.selectFrom('analytics_properties').select('id').where('domain', '=', domain).executeTakeFirst();
    if (taken) throw conflict(`the domain ${domain} is counted by another property already`, 'domain_taken');
    const now = ctx.clock.now();
    const row: PropertyRow = {
      id: newId('ap', now.getTime()),
      workspace_id: input.workspaceId,
      domain,
      name,
      subdomains: input.subdomains ? 1 : 0,
      chat_channel_id: chat,
      created_at: iso(now),
      updated_at: iso(now),
      deleted_at: null,
      rolled_through: null,
    };
    await trx.insertInto('analytics_properties').values(row).execute();
    return row;
  });
}

export async function listProperties(ctx: Pick<Ctx, 'db'>, workspaceId?: string): Promise<PropertyRow[]> {
  let q = ctx.db.selectFrom('analytics_properties').selectAll().where('deleted_at', 'is', null);
  if (workspaceId) q = q.where('workspace_id', '=', workspaceId);
  return q.orderBy('workspace_id').orderBy('domain').execute();
}

export async function getProperty(ctx: Pick<Ctx, 'db'>, workspaceId: string, id: string): Promise<PropertyRow> {
  const row = await ctx.db
    .selectFrom('analytics_properties')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw notFound('analytics property');
  return row;
}

/** The live property that counts pages of this domain (the tracker's `d`). */
export async function propertyForDomain(db: Db, domain: string): Promise<PropertyRow | undefined> {
  return db.selectFrom('analytics_properties').selectAll().where('domain', '=', domain).where('deleted_at', 'is', null).executeTakeFirst();
}

export async function updateProperty(
  ctx: C,
  workspaceId: string,
  id: string,
  patch: { name?: string; subdomains?: boolean; chatChannelId?: string | null },
): Promise<PropertyRow> {
  return inTransaction(ctx.db, async (trx) => {
    const row = await getProperty({ db: trx }, workspaceId, id);
    const next = { ...row };
    if (patch.name !== undefined) next.name = checkName(patch.name, row.domain);
    if (patch.subdomains !== undefined) next.subdomains = patch.subdomains ? 1 : 0;
    if (patch.chatChannelId !== undefined) next.chat_channel_id = await checkChatChannel(trx, workspaceId, patch.chatChannelId);
    next.updated_at = iso(ctx.clock.now());
    await trx
      .updateTable('analytics_properties')
      .set({ name: next.name, subdomains: next.subdomains, chat_channel_id: next.chat_channel_id, updated_at: next.updated_at })
      .where('id', '=', id)
      .execute();
    return next;
  });
}

/**
 * Deletes a property: it stops counting at once (its domain is freed) and the retention job removes
 * its events, visits and rollups in batches, then the row.
 */
export async function deleteProperty(ctx: C, workspaceId: string, id: string): Promise<void> {
  const row = await getProperty(ctx, workspaceId, id);
  const now = iso(ctx.clock.now());
  await ctx.db
    .updateTable('analytics_properties')
    .set({ deleted_at: now, updated_at: now, domain: `~${row.id}` })
    .where('id', '=', id)
    .execute();
}

export function monthOf(d: Date): string {
  return iso(d).slice(0, 7);
}

/** The workspace's own limit, else the server's SVC_ANALYTICS_MONTHLY_EVENTS; 0 = none. */
export async function monthlyLimit(ctx: Pick<Ctx, 'db' | 'config'>, workspaceId: string): Promise<{ limit: number; own: boolean }> {
  const row = await ctx.db.selectFrom('analytics_limits').select('monthly_events').where('workspace_id', '=', workspaceId).executeTakeFirst();
  return row ? { limit: Number(row.monthly_events), own: true } : { limit: ctx.config.analytics.monthlyEvents, own: false };
}

/** Sets the workspace's monthly event limit; 0 removes it (the server default applies again). */
export async function setMonthlyLimit(ctx: C, workspaceId: string, monthly: number): Promise<void> {
  if (!Number.isSafeInteger(monthly) || monthly < 0) throw invalid('the monthly limit must be a whole number, 0 to remove it');
  if (monthly === 0) {
    await ctx.db.deleteFrom('analytics_limits').where('workspace_id', '=', workspaceId).execute();
    return;
  }
  const now = iso(ctx.clock.now());
  await ctx.db
    .insertInto('analytics_limits')
    .values({ workspace_id: workspaceId, monthly_events: monthly, updated_at: now })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ monthly_events: monthly, updated_at: now }))
    .execute();
}

export interface Usage {
  month: string;
  events: number;
  /** 0 = no limit. */
  limit: number;
  /** Whole percent of the limit used (0 without a limit). */
  percent: number;
  /** ok, warning (80 %), reached (100 %), over (110 %: pageviews are dropped until the next month). */
  state: 'ok' | 'warning' | 'reached' | 'over';
}

export function usageState(events: number, limit: number): Usage['state'] {
  if (!limit) return 'ok';
  if (events * 10 >= limit * 11) return 'over';
  if (events >= limit) return 'reached';
  if (events * 10 >= limit * 8) return 'warning';
  return 'ok';
}

export async function workspaceUsage(ctx: Pick<Ctx, 'db' | 'config' | 'clock'>, workspaceId: string): Promise<Usage> {
  const month = monthOf(ctx.clock.now());
  const row = await ctx.db.selectFrom('analytics_usage').select('events').where('workspace_id', '=', workspaceId).where('month', '=', month).executeTakeFirst();
  const events = Number(row?.events ?? 0);
  const { limit } = await monthlyLimit(ctx, workspaceId);
  return { month, events, limit, percent: limit ? Math.floor((events * 100) / limit) : 0, state: usageState(events, limit) };
}

/** Events this month per property (the list command), counted from the raw events. */
export async function eventsThisMonth(ctx: Pick<Ctx, 'db' | 'clock'>, propertyIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!propertyIds.length) return out;
  const start = `${monthOf(ctx.clock.now())}-01`;
  const rows = await ctx.db
    .selectFrom('analytics_events')
    .select(['property_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('property_id', 'in', propertyIds)
    .where('day', '>=', start)
    .groupBy('property_id')
    .execute();
  for (const r of rows) out.set(r.property_id, Number(r.n));
  return out;
}
