import type { Ctx } from '../context.js';
import type { InboxesTable } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { randomToken } from '../platform/crypto.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';

export type InboxRow = InboxesTable;
type C = Pick<Ctx, 'db' | 'clock' | 'sealer'>;

export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ı/g, 'i')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/g, '');
  return slug || 'inbox';
}

export function checkLocale(tag: string): string {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    if (canonical) return canonical;
  } catch {
    /* fall through */
  }
  throw invalid(`not a language tag: ${JSON.stringify(tag)}`);
}

export function checkTimezone(zone: string): string {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    throw invalid(`not a time zone name: ${JSON.stringify(zone)}`);
  }
}

export interface NewInbox {
  workspaceId: string;
  name: string;
  slug?: string;
  locale?: string;
  timezone?: string;
  mode?: 'live' | 'async';
  expectedReplyMinutes?: number | null;
}

export async function createInbox(ctx: C, input: NewInbox): Promise<InboxRow> {
  const name = input.name.trim();
  if (!name || name.length > 200) throw invalid('inbox name must be 1 to 200 characters');
  if (input.mode && input.mode !== 'live' && input.mode !== 'async') throw invalid('mode must be live or async');
  const minutes = input.expectedReplyMinutes ?? null;
  if (minutes !== null && (!Number.isInteger(minutes) || minutes < 1 || minutes > 525_600)) {
    throw invalid('expected reply minutes must be a whole number from 1 to 525600');
  }
  let slug: string;
  if (input.slug !== undefined) {
    slug = input.slug.trim();
    if (!/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/.test(slug)) throw invalid('slug must be lower-case letters, digits and dashes');
    const taken = await ctx.db.selectFrom('inboxes').select('id').where('workspace_id', '=', input.workspaceId).where('slug', '=', slug).executeTakeFirst();
    if (taken) throw conflict(`slug ${slug} is already used by inbox ${taken.id}`);
  } else {
    slug = await freeSlug(ctx, input.workspaceId, slugify(name));
  }
  const now = iso(ctx.clock.now());
  const inbox: InboxRow = {
    id: newId('inb'),
    workspace_id: input.workspaceId,
    name,
    slug,
    locale: checkLocale(input.locale ?? 'en'),
    timezone: checkTimezone(input.timezone ?? 'UTC'),
    mode: input.mode ?? 'async',
    expected_reply_minutes: minutes,
    identity_secret_sealed: ctx.sealer.seal(randomToken(32)),
    created_at: now,
    updated_at: now,
  };
  await ctx.db.insertInto('inboxes').values(inbox).execute();
  return inbox;
}

async function freeSlug(ctx: C, workspaceId: string, base: string): Promise<string> {
  const rows = await ctx.db.selectFrom('inboxes').select('slug').where('workspace_id', '=', workspaceId).where('slug', 'like', `${base}%`).execute();
  const used = new Set(rows.map((r) => r.slug));
  if (!used.has(base)) return base;
  for (let i = 2; ; i++) if (!used.has(`${base}-${i}`)) return `${base}-${i}`;
}

export async function listInboxes(ctx: Pick<Ctx, 'db'>, workspaceId: string, onlyIds?: readonly string[] | null): Promise<InboxRow[]> {
  let q = ctx.db.selectFrom('inboxes').selectAll().where('workspace_id', '=', workspaceId);
  if (onlyIds) q = onlyIds.length ? q.where('id', 'in', onlyIds) : q.where('id', '=', '');
  return q.orderBy('id').execute();
}

/** An inbox of the workspace by id or slug. */
export async function resolveInbox(ctx: Pick<Ctx, 'db'>, workspaceId: string, ref: string): Promise<InboxRow> {
  const row = await ctx.db
    .selectFrom('inboxes')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref)]))
    .executeTakeFirst();
  if (!row) throw notFound(`inbox ${JSON.stringify(ref)}`);
  return row;
}

export function formatInbox(i: InboxRow) {
  return {
    id: i.id,
    name: i.name,
    slug: i.slug,
    locale: i.locale,
    timezone: i.timezone,
    mode: i.mode,
    expected_reply_minutes: i.expected_reply_minutes,
    created_at: i.created_at,
    updated_at: i.updated_at,
  };
}

/** Replaces the inbox identity secret (it proves visitors' external ids) and returns it, once. */
export async function rotateIdentitySecret(ctx: C, workspaceId: string, inboxId: string): Promise<string> {
  const secret = randomToken(32);
  const r = await ctx.db
    .updateTable('inboxes')
    .set({ identity_secret_sealed: ctx.sealer.seal(secret), updated_at: iso(ctx.clock.now()) })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', inboxId)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw notFound('inbox');
  return secret;
}
