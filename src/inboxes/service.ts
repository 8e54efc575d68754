import type { Ctx } from '../context.js';
import { retryOnUniqueViolation } from '../db/retry.js';
import { announceEvents, recordEvent } from '../events/service.js';
import { iso } from '../platform/clock.js';
import { randomToken } from '../platform/crypto.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { charCount } from '../platform/text.js';
import { type InboxRow, inboxByRef } from './store.js';

export type { InboxRow } from './store.js';

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
  const name = checkInboxName(input.name);
  if (input.mode && input.mode !== 'live' && input.mode !== 'async') throw invalid('mode must be live or async');
  const minutes = checkReplyMinutes(input.expectedReplyMinutes ?? null);
  const slug = input.slug !== undefined ? await checkSlug(ctx, input.workspaceId, input.slug) : await freeSlug(ctx, input.workspaceId, slugify(name));
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
    deleted_at: null,
  };
  await ctx.db.insertInto('inboxes').values(inbox).execute();
  return inbox;
}

function checkInboxName(raw: string): string {
  const name = raw.trim();
  if (!name || charCount(name) > 200) throw invalid('inbox name must be 1 to 200 characters');
  return name;
}

function checkReplyMinutes(minutes: number | null): number | null {
  if (minutes !== null && (!Number.isInteger(minutes) || minutes < 1 || minutes > 525_600)) {
    throw invalid('expected reply minutes must be a whole number from 1 to 525600');
  }
  return minutes;
}

/** A slug the caller chose: its form, and free in the workspace (`exceptId`: the inbox being renamed). */
async function checkSlug(ctx: Pick<Ctx, 'db'>, workspaceId: string, raw: string, exceptId?: string): Promise<string> {
  const slug = raw.trim();
  if (!/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/.test(slug)) throw invalid('slug must be lower-case letters, digits and dashes');
  const taken = await ctx.db.selectFrom('inboxes').select('id').where('workspace_id', '=', workspaceId).where('slug', '=', slug).executeTakeFirst();
  if (taken && taken.id !== exceptId) throw conflict(`slug ${slug} is already used by inbox ${taken.id}`);
  return slug;
}

async function freeSlug(ctx: C, workspaceId: string, base: string): Promise<string> {
  const rows = await ctx.db.selectFrom('inboxes').select('slug').where('workspace_id', '=', workspaceId).where('slug', 'like', `${base}%`).execute();
  const used = new Set(rows.map((r) => r.slug));
  if (!used.has(base)) return base;
  for (let i = 2; ; i++) if (!used.has(`${base}-${i}`)) return `${base}-${i}`;
}

export async function listInboxes(ctx: Pick<Ctx, 'db'>, workspaceId: string, onlyIds?: readonly string[] | null): Promise<InboxRow[]> {
  let q = ctx.db.selectFrom('inboxes').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null);
  if (onlyIds) q = onlyIds.length ? q.where('id', 'in', onlyIds) : q.where('id', '=', '');
  return q.orderBy('id').execute();
}

/** A live inbox of the workspace by id or slug (a deleted one is not found). */
export async function resolveInbox(ctx: Pick<Ctx, 'db'>, workspaceId: string, ref: string): Promise<InboxRow> {
  const row = await inboxByRef(ctx.db, workspaceId, ref, { live: true });
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
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw notFound('inbox');
  return secret;
}

export interface InboxPatch {
  name?: string;
  slug?: string;
  locale?: string;
  timezone?: string;
  mode?: 'live' | 'async';
  /** null clears it. */
  expectedReplyMinutes?: number | null;
}

/**
 * Changes an inbox's settings (every field checked before anything is written); one
 * `inbox.updated` event (realtime only) when something changed. An empty patch is refused.
 */
export async function updateInbox(ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>, workspaceId: string, inboxId: string, patch: InboxPatch): Promise<InboxRow> {
  if (Object.values(patch).every((v) => v === undefined))
    throw invalid('nothing to change: name one of name, slug, locale, timezone, mode, expected_reply_minutes');
  const set: Partial<InboxRow> = {};
  if (patch.name !== undefined) set.name = checkInboxName(patch.name);
  if (patch.locale !== undefined) set.locale = checkLocale(patch.locale);
  if (patch.timezone !== undefined) set.timezone = checkTimezone(patch.timezone);
  if (patch.mode !== undefined) {
    if (patch.mode !== 'live' && patch.mode !== 'async') throw invalid('mode must be live or async');
    set.mode = patch.mode;
  }
  if (patch.expectedReplyMinutes !== undefined) set.expected_reply_minutes = checkReplyMinutes(patch.expectedReplyMinutes);
  // Two renames to one slug at once: the loser runs again and finds the winner's slug (409).
  const saved = await retryOnUniqueViolation(() =>
    ctx.db.transaction().execute(async (trx) => {
      const current = await resolveInbox({ db: trx }, workspaceId, inboxId);
      if (patch.slug !== undefined) set.slug = await checkSlug({ db: trx }, workspaceId, patch.slug, current.id);
      const changed = (Object.keys(set) as (keyof InboxRow)[]).filter((k) => set[k] !== current[k]);
      if (changed.length === 0) return { inbox: current, changed };
      const next: InboxRow = { ...current, ...set, updated_at: iso(ctx.clock.now()) };
      await trx
        .updateTable('inboxes')
        .set({ ...set, updated_at: next.updated_at })
        .where('id', '=', current.id)
        .execute();
      await recordEvent(
        { db: trx, clock: ctx.clock },
        { workspaceId, inboxId: current.id, type: 'inbox.updated', occurredAt: ctx.clock.now(), data: { inbox: formatInbox(next), changed }, webhook: false },
      );
      return { inbox: next, changed };
    }),
  );
  if (saved.changed.length) announceEvents(ctx);
  return saved.inbox;
}
