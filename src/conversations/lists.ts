import { z } from 'zod';
import type { Access } from '../auth/access.js';
import { canSeeInbox } from '../auth/access.js';
import { contactNames } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { type CustomFieldCondition, customFieldsOf, matchCustomFields } from '../custom-fields/store.js';
import { isPostgres } from '../db/dialect.js';
import { readRows } from '../db/readers.js';
import type { ConversationStatus } from '../db/schema.js';
import { deletedInboxIds, deletedInboxIdsOf, inboxIsDeleted } from '../inboxes/store.js';
import { iso } from '../platform/clock.js';
import { forbidden, notFound } from '../platform/errors.js';
import { decodeCursor, toPage, toPageById } from '../platform/pagination.js';
import { teamIdsOfMember } from '../teams/store.js';
import { applyConditions, type FlagColumns, plainFlags, unindexedFlags, type ViewFilter } from './filters.js';
import { type ConversationRow, formatConversation, formatMessage } from './format.js';
import { attachmentsOf, findConversation, labelsOf } from './store.js';

export interface ConversationFilter {
  inboxId?: string;
  status?: ConversationStatus;
  /** A person id, or 'none' for unassigned. */
  assigneeId?: string;
  /** A team id, 'none' for no team, or 'mine' for the calling member's teams. */
  teamId?: string;
  label?: string;
  contactId?: string;
  spam?: boolean;
  imported?: boolean;
  /** true: only snoozed; false: none. Unset: snoozed ones leave the open list (status open). */
  snoozed?: boolean;
  /** Custom field conditions (customFieldConditions in src/custom-fields/store.ts); all must match. */
  customFields?: readonly CustomFieldCondition[];
  /** A saved view's and the query's further conditions (filters.ts), all of which must hold too. */
  conditions?: ViewFilter[];
}

const cursorShape = z.object({ id: z.string() });
const activityCursorShape = z.object({ at: z.string(), id: z.string() });

export type ConversationSort = 'created' | 'activity' | 'sla_due';

/**
 * Keyset-paginated, only inboxes the caller reaches: newest first by creation, or by last activity
 * (the panel's order). Items carry what a list shows beside the conversation: the contact's name
 * and address, the start of the latest message, and whether it is unread for the calling member.
 */
export async function listConversations(
  ctx: Pick<Ctx, 'db'> & Partial<Pick<Ctx, 'clock'>>,
  access: Access,
  filter: ConversationFilter,
  page: { limit?: number; cursor?: string; sort?: ConversationSort },
) {
  const limit = page.limit ?? 50;
  const sort = page.sort ?? 'created';
  // One label's list by activity walks that label's rows in activity order (migration 0082) and
  // joins their conversations, instead of probing each conversation of the status for the label.
  const label = sort === 'activity' ? filter.label : undefined;
  // Postgres plans these lists from its statistics, LIMIT included: the plain columns there.
  let q = await filteredQuery(ctx, access, label ? { ...filter, label: undefined } : filter, undefined, isPostgres(ctx.db) ? plainFlags : unindexedFlags);
  let rows: ConversationRow[];
  let cursorOf: (r: ConversationRow) => unknown;
  if (sort === 'activity') {
    const after = decodeCursor(page.cursor, activityCursorShape);
    // A row-value comparison, as for sla_due: an OR of the two cases made SQLite read both parts of
    // the index apart and sort what they found (bench/panel-api, deep pages of one assignee).
    if (label) {
      const status = filter.status ?? filter.conditions?.find((c) => c.status?.length === 1)?.status?.[0];
      let byLabel = q
        .innerJoin('conversation_labels as by_label', (join) => {
          const on = join
            .onRef('by_label.conversation_id', '=', 'conversations.id')
            .on('by_label.conversation_workspace_id', '=', access.workspaceId)
            .on('by_label.label', '=', label);
          return status ? on.on('by_label.conversation_status', '=', status) : on;
        })
        .clearSelect()
        .selectAll('conversations');
      if (after)
        byLabel = byLabel.where((eb) => eb(eb.refTuple('by_label.conversation_activity_at', 'by_label.conversation_id'), '<', eb.tuple(after.at, after.id)));
      rows = await byLabel
        .orderBy('by_label.conversation_activity_at', 'desc')
        .orderBy('by_label.conversation_id', 'desc')
        .limit(limit + 1)
        .execute();
    } else {
      if (after) q = q.where((eb) => eb(eb.refTuple('last_message_at', 'id'), '<', eb.tuple(after.at, after.id)));
      rows = await q
        .orderBy('last_message_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
    }
    cursorOf = (r) => ({ at: r.last_message_at, id: r.id });
  } else if (sort === 'sla_due') {
    // Due first (breached ones lead: their due time is past); nothing due sorts last (a sentinel, see src/sla/engine.ts).
    const after = decodeCursor(page.cursor, activityCursorShape);
    // A row-value comparison: both dialects seek the (…, sla_due_at, id) index to it.
    if (after) q = q.where((eb) => eb(eb.refTuple('sla_due_at', 'id'), '>', eb.tuple(after.at, after.id)));
    rows = await q
      .orderBy('sla_due_at', 'asc')
      .orderBy('id', 'asc')
      .limit(limit + 1)
      .execute();
    cursorOf = (r) => ({ at: r.sla_due_at, id: r.id });
  } else {
    const after = decodeCursor(page.cursor, cursorShape);
    if (after) q = q.where('id', '<', after.id);
    rows = await q
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    cursorOf = (r) => ({ id: r.id });
  }
  const items = await listItems(ctx, access, rows.slice(0, limit));
  const byId = new Map(items.map((x) => [x.id, x]));
  return toPage(rows, limit, cursorOf, (r) => byId.get(r.id)!);
}

/** The one list query's conditions: what the caller reaches, the filter, and a view's conditions. */
async function filteredQuery(
  ctx: Pick<Ctx, 'db'> & Partial<Pick<Ctx, 'clock'>>,
  access: Access,
  filter: ConversationFilter,
  deletedInboxes?: string[],
  flags: FlagColumns = plainFlags,
) {
  let q = ctx.db.selectFrom('conversations').selectAll().where('workspace_id', '=', access.workspaceId);
  // Those of a deleted inbox are gone for readers at once (the deletion job removes them in batches).
  // Never an anti-join (`not exists`): Postgres misjudges its rows and starts parallel workers for a
  // 50-row page (40 ms instead of 2 at 100,000 open conversations, bench/sla). A page takes them as a
  // `not in` subquery, a filter on the list's own index with the subquery hashed once, which spares
  // Postgres a round trip before every list. Counts are given the ids, looked up once for all of
  // them: with none, their condition is left out (a filter on each counted row cost a closed count
  // of 140,000 rows 37 % more on SQLite).
  if (!deletedInboxes) q = q.where('inbox_id', 'not in', deletedInboxIdsOf(access.workspaceId));
  else if (deletedInboxes.length) q = q.where('inbox_id', 'not in', deletedInboxes);
  if (access.inboxIds !== null) q = access.inboxIds.length ? q.where('inbox_id', 'in', access.inboxIds) : q.where('inbox_id', '=', '');
  if (filter.inboxId) q = q.where('inbox_id', '=', filter.inboxId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.assigneeId === 'none') q = q.where('assignee_id', 'is', null);
  else if (filter.assigneeId) q = q.where('assignee_id', '=', filter.assigneeId);
  if (filter.teamId === 'none') q = q.where('team_id', 'is', null);
  else if (filter.teamId === 'mine') {
    const teams = access.actor.kind === 'member' ? await teamIdsOfMember(ctx.db, access.workspaceId, access.actor.personId) : [];
    q = teams.length ? q.where('team_id', 'in', teams) : q.where('team_id', '=', '');
  } else if (filter.teamId) q = q.where('team_id', '=', filter.teamId);
  if (filter.contactId) q = q.where('contact_id', '=', filter.contactId);
  if (filter.spam !== undefined) q = q.where(filter.spam ? 'spam' : flags.spam, '=', filter.spam ? 1 : 0);
  if (filter.imported !== undefined) q = q.where('imported', '=', filter.imported ? 1 : 0);
  const snoozed = filter.snoozed ?? (filter.status === 'open' && !filter.conditions?.some((c) => c.snoozed !== undefined) ? false : undefined);
  if (snoozed !== undefined) q = q.where(snoozed ? 'snoozed_at' : flags.snoozedAt, snoozed ? 'is not' : 'is', null);
  if (filter.label) {
    const label = filter.label;
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('conversation_labels')
          .select('conversation_labels.label')
          .whereRef('conversation_labels.conversation_id', '=', 'conversations.id')
          .where('conversation_labels.label', '=', label),
      ),
    );
  }
  if (filter.customFields?.length) q = q.where(matchCustomFields(filter.customFields, 'conversations.id'));
  for (const c of filter.conditions ?? []) q = await applyConditions(ctx.db, access, c, ctx.clock?.now() ?? new Date(), q, flags);
  return q;
}

/** How many conversations each filter matches (saved views' counts in the sidebar), in their order. */
export async function countConversations(ctx: Pick<Ctx, 'db'> & Partial<Pick<Ctx, 'clock'>>, access: Access, filters: ConversationFilter[]): Promise<number[]> {
  if (!filters.length) return [];
  const gone = await deletedInboxIds(ctx.db, access.workspaceId);
  // At once: on Postgres each count takes its own pooled connection (the database counts them in
  // parallel); on SQLite they queue on the one connection.
  return Promise.all(
    filters.map(async (filter) => {
      const q = await filteredQuery(ctx, access, filter, gone);
      const row = await q
        .clearSelect()
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }),
  );
}

/** Conversations as lists show them: with the contact, the latest message's start and unread state. */
export async function listItems(ctx: Pick<Ctx, 'db'>, access: Access, rows: ConversationRow[]) {
  const ids = rows.map((r) => r.id);
  const personId = access.actor.kind === 'member' ? access.actor.personId : null;
  const [labels, contacts, reads, values] = await Promise.all([
    labelsOf(ctx.db, ids),
    contactNames(
      ctx.db,
      rows.map((r) => r.contact_id),
    ),
    personId && ids.length
      ? ctx.db
          .selectFrom('conversation_reads')
          .select(['conversation_id', 'read_at'])
          .where('person_id', '=', personId)
          .where('conversation_id', 'in', ids)
          .execute()
      : Promise.resolve([]),
    customFieldsOf(ctx.db, access.workspaceId, 'conversation', ids),
  ]);
  const readAt = new Map(reads.map((r) => [r.conversation_id, r.read_at]));
  return rows.map((r) => {
    const contact = contacts.get(r.contact_id);
    return {
      ...formatConversation(r, labels.get(r.id) ?? []),
      custom_fields: values.get(r.id) ?? {},
      contact: { id: r.contact_id, name: contact?.name ?? null, email: contact?.email ?? null },
      preview: r.preview ?? null,
      unread: personId !== null && isUnread(r, readAt.get(r.id)),
    };
  });
}

/** Open conversations unread by the calling member: per inbox, assigned to them, unassigned, all. */
export async function unreadCounts(ctx: Pick<Ctx, 'db'>, access: Access) {
  const counts = { all: 0, mine: 0, unassigned: 0, inboxes: {} as Record<string, number> };
  if (access.actor.kind !== 'member') return counts;
  const personId = access.actor.personId;
  let q = ctx.db
    .selectFrom('conversations as c')
    .leftJoin('conversation_reads as r', (j) => j.onRef('r.conversation_id', '=', 'c.id').on('r.person_id', '=', personId))
    .select(['c.inbox_id', 'c.assignee_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('c.workspace_id', '=', access.workspaceId)
    .where('c.status', '=', 'open')
    .where('c.spam', '=', 0)
    .where('c.snoozed_at', 'is', null)
    .where('c.last_inbound_at', 'is not', null)
    .where((eb) => eb.or([eb('r.read_at', 'is', null), eb('r.read_at', '<', eb.ref('c.last_inbound_at'))]))
    .where((eb) => eb.not(inboxIsDeleted('c.inbox_id')));
  if (access.inboxIds !== null) q = access.inboxIds.length ? q.where('c.inbox_id', 'in', access.inboxIds) : q.where('c.inbox_id', '=', '');
  // Counts over every open conversation: off the event loop on SQLite (src/db/readers.ts).
  for (const row of await readRows(ctx.db, q.groupBy(['c.inbox_id', 'c.assignee_id']))) {
    const n = Number(row.n);
    counts.all += n;
    counts.inboxes[row.inbox_id] = (counts.inboxes[row.inbox_id] ?? 0) + n;
    if (row.assignee_id === personId) counts.mine += n;
    if (row.assignee_id === null) counts.unassigned += n;
  }
  return counts;
}

/** Labels in use on open conversations the caller reaches, with how many carry each (for navigation). */
export async function openLabelCounts(ctx: Pick<Ctx, 'db'>, access: Access): Promise<{ label: string; open: number }[]> {
  // The open conversations first (an index range), then their labels by conversation: as a join,
  // SQLite walked every label of every conversation ever labelled instead (150,000 conversations:
  // ~150 ms of CPU per overview against ~8 ms; bench/panel-api).
  let open = ctx.db
    .selectFrom('conversations as c')
    .select('c.id')
    .where('c.workspace_id', '=', access.workspaceId)
    .where('c.status', '=', 'open')
    .where('c.spam', '=', 0);
  if (access.inboxIds !== null) open = access.inboxIds.length ? open.where('c.inbox_id', 'in', access.inboxIds) : open.where('c.inbox_id', '=', '');
  const rows = await readRows(
    ctx.db,
    ctx.db
      .selectFrom('conversation_labels as l')
      .select(['l.label', (eb) => eb.fn.countAll<number>().as('open')])
      .where('l.conversation_id', 'in', open)
      .groupBy('l.label')
      .orderBy('l.label')
      .limit(200),
  );
  return rows.map((r) => ({ label: r.label, open: Number(r.open) }));
}

/** Unread for a member until they open it after the customer's latest (live) message. */
export function isUnread(c: Pick<ConversationRow, 'last_inbound_at'>, readAt: string | undefined): boolean {
  return !!c.last_inbound_at && (!readAt || readAt < c.last_inbound_at);
}

/** Records that a member opened a conversation now (it stops being unread for them). */
export async function markConversationRead(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, conversationId: string): Promise<{ read_at: string }> {
  if (access.actor.kind !== 'member') throw forbidden('only a signed-in member has an unread state');
  const conversation = await findConversation(ctx.db, access.workspaceId, conversationId);
  if (!conversation || !canSeeInbox(access, conversation.inbox_id)) throw notFound('conversation');
  const readAt = iso(ctx.clock.now());
  await ctx.db
    .insertInto('conversation_reads')
    .values({ conversation_id: conversation.id, person_id: access.actor.personId, read_at: readAt })
    .onConflict((oc) => oc.columns(['conversation_id', 'person_id']).doUpdateSet({ read_at: readAt }))
    .execute();
  return { read_at: readAt };
}

/** Messages of a conversation, newest first unless order is 'asc'. */
export async function listMessages(ctx: Pick<Ctx, 'db'>, conversation: ConversationRow, page: { limit?: number; cursor?: string; order?: 'asc' | 'desc' }) {
  const limit = page.limit ?? 50;
  const order = page.order ?? 'desc';
  const after = decodeCursor(page.cursor, cursorShape);
  let q = ctx.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversation.id);
  if (after) q = q.where('id', order === 'desc' ? '<' : '>', after.id);
  const rows = await q
    .orderBy('id', order)
    .limit(limit + 1)
    .execute();
  return toPageById(
    rows,
    limit,
    (ids) => attachmentsOf(ctx.db, ids),
    (r, files) => formatMessage(r, files.get(r.id) ?? [], { bcc: true }),
  );
}
