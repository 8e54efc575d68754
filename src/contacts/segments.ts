// Segments: a saved contact filter (the contacts list's filters under a name), shared by the
// workspace. A broadcast may take its audience from one (src/broadcasts: resolved when sending
// starts, by `segmentContactPages`), so a segment waited on by a broadcast cannot be deleted.
import { z } from 'zod';
import type { Access } from '../auth/access.js';
import { broadcastsWaitingOnSegment } from '../broadcasts/store.js';
import type { Ctx } from '../context.js';
import type { ContactSegmentsTable, Db } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { type ContactFilter, filteredContacts } from './list.js';

export const MAX_SEGMENTS = 500;

/** The stored filter: the GET /v1/contacts query parameters (has_open as a boolean). */
export const SegmentFilterSchema = z
  .object({
    q: z.string().max(200).optional(),
    email: z.string().max(254).optional(),
    inbox_id: z.string().max(100).optional(),
    external_id: z.string().max(255).optional(),
    has_open: z.boolean().optional(),
    created_after: z.string().max(40).optional(),
    created_before: z.string().max(40).optional(),
  })
  .strict();
export type SegmentFilter = z.infer<typeof SegmentFilterSchema>;

export type SegmentRow = ContactSegmentsTable;

export function contactFilterOf(f: SegmentFilter): ContactFilter {
  return {
    query: f.q,
    email: f.email,
    inboxId: f.inbox_id,
    externalId: f.external_id,
    hasOpen: f.has_open,
    createdAfter: f.created_after,
    createdBefore: f.created_before,
  };
}

function cleanFilter(f: SegmentFilter): SegmentFilter {
  const out: SegmentFilter = {};
  for (const [k, v] of Object.entries(f) as [keyof SegmentFilter, string | boolean | undefined][]) {
    if (v === undefined || (typeof v === 'string' && v.trim() === '')) continue;
    (out as Record<string, unknown>)[k] = typeof v === 'string' ? v.trim() : v;
  }
  return out;
}

function checkName(name: string): string {
  const n = name.replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  if (!n) throw invalid('a segment needs a name');
  return n.slice(0, 100);
}

function actorId(access: Access): string {
  return access.actor.kind === 'member' ? access.actor.personId : access.actor.keyId;
}

export async function listSegments(ctx: Pick<Ctx, 'db'>, access: Access): Promise<SegmentRow[]> {
  return ctx.db.selectFrom('contact_segments').selectAll().where('workspace_id', '=', access.workspaceId).orderBy('name').orderBy('id').execute();
}

export async function getSegmentFor(ctx: Pick<Ctx, 'db'>, access: Pick<Access, 'workspaceId'>, id: string): Promise<SegmentRow> {
  const row = await ctx.db.selectFrom('contact_segments').selectAll().where('id', '=', id).where('workspace_id', '=', access.workspaceId).executeTakeFirst();
  if (!row) throw notFound('segment');
  return row;
}

/** How many contacts the segment finds now, among those the caller reaches. */
export async function countSegment(ctx: Pick<Ctx, 'db'>, access: Access, row: SegmentRow): Promise<number> {
  const ids = filteredContacts(ctx.db, access, contactFilterOf(JSON.parse(row.filter)));
  const r = await ctx.db
    .selectFrom(ids.as('m'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function createSegment(ctx: Ctx, access: Access, input: { name: string; filter: SegmentFilter }): Promise<SegmentRow> {
  const filter = cleanFilter(input.filter);
  // Bad times or an external id without its inbox are refused now, not when the segment is used.
  filteredContacts(ctx.db, access, contactFilterOf(filter));
  const count = await ctx.db
    .selectFrom('contact_segments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', access.workspaceId)
    .executeTakeFirstOrThrow();
  if (Number(count.n) >= MAX_SEGMENTS) throw conflict(`a workspace has at most ${MAX_SEGMENTS} segments`);
  const now = iso(ctx.clock.now());
  const row: SegmentRow = {
    id: newId('seg'),
    workspace_id: access.workspaceId,
    name: checkName(input.name),
    filter: JSON.stringify(filter),
    created_by: actorId(access),
    created_at: now,
    updated_at: now,
  };
  await ctx.db.insertInto('contact_segments').values(row).execute();
  return row;
}

export async function updateSegment(ctx: Ctx, access: Access, id: string, patch: { name?: string; filter?: SegmentFilter }): Promise<SegmentRow> {
  const row = await getSegmentFor(ctx, access, id);
  const set: Partial<SegmentRow> = { updated_at: iso(ctx.clock.now()) };
  if (patch.name !== undefined) set.name = checkName(patch.name);
  if (patch.filter !== undefined) {
    const filter = cleanFilter(patch.filter);
    filteredContacts(ctx.db, access, contactFilterOf(filter));
    set.filter = JSON.stringify(filter);
  }
  await ctx.db.updateTable('contact_segments').set(set).where('id', '=', row.id).execute();
  return getSegmentFor(ctx, access, id);
}

export async function deleteSegment(ctx: Ctx, access: Access, id: string): Promise<void> {
  const row = await getSegmentFor(ctx, access, id);
  const waiting = await broadcastsWaitingOnSegment(ctx.db, row.id);
  if (waiting.length) {
    throw conflict(`broadcast ${waiting[0]} takes its recipients from this segment when it is sent; cancel it or wait until it has started`, 'segment_in_use', {
      broadcast_ids: waiting.slice(0, 20),
    });
  }
  await ctx.db.deleteFrom('contact_segments').where('id', '=', row.id).execute();
}

/** The segment's contacts (of the whole workspace), a page of ids at a time in id order. */
export async function* segmentContactPages(db: Db, workspaceId: string, segmentId: string, pageSize = 2000): AsyncGenerator<string[]> {
  const row = await getSegmentFor({ db }, { workspaceId }, segmentId);
  const filter = contactFilterOf(JSON.parse(row.filter));
  let after = '';
  for (;;) {
    const ids = (
      await filteredContacts(db, { workspaceId, inboxIds: null }, filter).where('contacts.id', '>', after).orderBy('contacts.id').limit(pageSize).execute()
    ).map((r) => r.id);
    if (ids.length === 0) return;
    yield ids;
    after = ids[ids.length - 1];
    if (ids.length < pageSize) return;
  }
}

/** The workspace's segments are removed with it. */
export async function deleteWorkspaceSegments(db: Db, workspaceId: string, batch: number): Promise<number> {
  const ids = (await db.selectFrom('contact_segments').select('id').where('workspace_id', '=', workspaceId).limit(batch).execute()).map((r) => r.id);
  if (!ids.length) return 0;
  const r = await db.deleteFrom('contact_segments').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export function formatSegment(row: SegmentRow, count?: number) {
  return {
    id: row.id,
    name: row.name,
    filter: JSON.parse(row.filter) as SegmentFilter,
    ...(count === undefined ? {} : { contacts: count }),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
