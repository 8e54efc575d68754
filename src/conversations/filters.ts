// The conditions of a conversation list (issue 37): what a saved view stores and what
// GET /v1/conversations takes as query parameters, applied to the one list query (lists.ts).
// Every condition narrows (AND); a list inside a condition is any of its values (OR).
import { z } from '@hono/zod-openapi';
import { type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import type { Access } from '../auth/access.js';
import { contactIdsWithAttribute } from '../contacts/store.js';
import { customFieldConditions, MAX_FIELD_CONDITIONS, matchCustomFields } from '../custom-fields/store.js';
import { isPostgres } from '../db/dialect.js';
import type { Database, Db } from '../db/schema.js';
import { invalid } from '../platform/errors.js';
import { NOTHING_DUE } from '../sla/engine.js';
import { teamIdsOfMember } from '../teams/store.js';
import { MAX_LABEL_LENGTH, PRIORITIES, STATUSES } from './service.js';

export const MAX_VALUES = 50;
export const MAX_TEXT = 200;
const SOURCES = ['email', 'chat', 'feedback', 'api'] as const;
export const SLA_STATES = ['breached', 'running', 'none'] as const;
export const ATTRIBUTE_OPS = ['eq', 'neq', 'contains', 'exists', 'absent'] as const;
/** A contact attribute's key as conditions name it: no quotes or path syntax reach the JSON lookup. */
const ATTRIBUTE_KEY = /^[\p{L}\p{N}_ -]{1,100}$/u;
const ID = z.string().min(1).max(100);
const Instant = z.string().datetime({ offset: true }).openapi({ description: 'ISO 8601 time' });
const Range = z.object({ after: Instant.optional(), before: Instant.optional() }).strict();
const Label = z.string().min(1).max(MAX_LABEL_LENGTH);

export const ViewFilterSchema = z
  .object({
    status: z
      .array(z.enum(STATUSES as unknown as ['open', 'pending', 'closed']))
      .max(3)
      .optional(),
    inbox_id: z.array(ID).max(MAX_VALUES).optional(),
    channel_kind: z.array(z.enum(SOURCES)).max(4).optional().openapi({ description: 'how the conversation came: email, chat, feedback, api' }),
    assignee_id: z.array(ID).max(MAX_VALUES).optional().openapi({ description: 'person ids; `none`: unassigned; `me`: the signed-in member' }),
    team_id: z.array(ID).max(MAX_VALUES).optional().openapi({ description: 'team ids; `none`: in no team; `mine`: in a team of the signed-in member' }),
    label: z
      .object({
        any: z.array(Label).max(MAX_VALUES).optional(),
        all: z.array(Label).max(MAX_VALUES).optional(),
        none: z.array(Label).max(MAX_VALUES).optional(),
      })
      .strict()
      .optional()
      .openapi({ description: 'any: carries one of them; all: carries each; none: carries none of them' }),
    priority: z
      .array(z.enum(['none', ...(PRIORITIES as unknown as ['low', 'medium', 'high', 'urgent'])]))
      .max(5)
      .optional()
      .openapi({ description: '`none`: no priority set' }),
    snoozed: z.boolean().optional().openapi({ description: 'true: only snoozed; false: none. Unset with status open: snoozed ones are left out' }),
    sla: z.enum(SLA_STATES).optional().openapi({ description: 'breached: a target is past due; running: a target is due, not yet past; none: nothing due' }),
    imported: z.boolean().optional(),
    spam: z.boolean().optional().openapi({ description: 'a view leaves spam out unless this is true' }),
    created: Range.optional(),
    last_activity: Range.optional(),
    contact_attribute: z
      .object({ key: z.string().regex(ATTRIBUTE_KEY), op: z.enum(ATTRIBUTE_OPS), value: z.string().max(MAX_TEXT).optional() })
      .strict()
      .optional()
      .openapi({ description: 'a condition on one of the contact’s attributes (compared as text)' }),
    text: z.string().min(1).max(MAX_TEXT).optional().openapi({ description: 'in the subject or the latest message’s start (case-insensitive)' }),
    custom_fields: z
      .array(z.object({ key: z.string().min(1).max(100), value: z.string().max(MAX_TEXT) }).strict())
      .max(MAX_FIELD_CONDITIONS)
      .optional()
      .openapi({
        description: 'conversation custom fields, as the list’s `custom_field.<key>=<value>`: equality, a multi-select holds the option; all must hold',
      }),
  })
  .strict()
  .openapi('ViewFilter');
export type ViewFilter = z.infer<typeof ViewFilterSchema>;

/** The query parameters that carry a filter on GET /v1/conversations (lists: comma-separated; labels: repeated). */
export const filterQueryShape = {
  channel_kind: z.string().max(100).optional().openapi({ description: 'comma-separated: email, chat, feedback, api' }),
  priority: z.string().max(100).optional().openapi({ description: 'comma-separated: low, medium, high, urgent, none' }),
  label_any: z
    .union([Label, z.array(Label).max(MAX_VALUES)])
    .optional()
    .openapi({ description: 'repeatable: carries one of them' }),
  label_all: z
    .union([Label, z.array(Label).max(MAX_VALUES)])
    .optional()
    .openapi({ description: 'repeatable: carries each of them' }),
  label_none: z
    .union([Label, z.array(Label).max(MAX_VALUES)])
    .optional()
    .openapi({ description: 'repeatable: carries none of them' }),
  sla: z.enum(SLA_STATES).optional(),
  created_after: Instant.optional(),
  created_before: Instant.optional(),
  activity_after: Instant.optional(),
  activity_before: Instant.optional(),
  contact_attribute: z
    .string()
    .regex(ATTRIBUTE_KEY)
    .optional()
    .openapi({ description: 'an attribute key, with contact_attribute_op and contact_attribute_value' }),
  contact_attribute_op: z.enum(ATTRIBUTE_OPS).optional(),
  contact_attribute_value: z.string().max(MAX_TEXT).optional(),
  q: z.string().min(1).max(MAX_TEXT).optional().openapi({ description: 'text in the subject or the latest message’s start' }),
};

const many = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);
const bool = (v: string | undefined) => (v === undefined ? undefined : v === 'true');
const commaList = (v: string | undefined) =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);

/** A filter from the query parameters (the old single-valued ones keep working: a list of one). */
export function filterFromQuery(q: Record<string, unknown>): ViewFilter {
  const s = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : undefined);
  const label = { any: many(q.label_any as never), all: many(q.label_all as never), none: many(q.label_none as never) };
  const raw: Record<string, unknown> = {
    status: commaList(s('status')),
    inbox_id: commaList(s('inbox_id')),
    channel_kind: commaList(s('channel_kind')),
    assignee_id: commaList(s('assignee_id')),
    team_id: commaList(s('team_id')),
    priority: commaList(s('priority')),
    label: label.any || label.all || label.none ? label : undefined,
    sla: s('sla'),
    snoozed: bool(s('snoozed')),
    imported: bool(s('imported')),
    spam: bool(s('spam')),
    created: s('created_after') || s('created_before') ? { after: s('created_after'), before: s('created_before') } : undefined,
    last_activity: s('activity_after') || s('activity_before') ? { after: s('activity_after'), before: s('activity_before') } : undefined,
    contact_attribute: s('contact_attribute')
      ? { key: s('contact_attribute'), op: s('contact_attribute_op') ?? 'eq', value: s('contact_attribute_value') }
      : s('contact_attribute_op') || s('contact_attribute_value')
        ? { key: '', op: 'eq' }
        : undefined,
    text: s('q'),
  };
  for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k];
  return checkFilter(raw);
}

/** Parses a filter, with the same 400 as any bad body; operators that need a value get one. */
export function checkFilter(raw: unknown): ViewFilter {
  const parsed = ViewFilterSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(`filter ${issue.path.join('.') || 'value'}: ${issue.message}`);
  }
  const f = parsed.data;
  const a = f.contact_attribute;
  if (a && (a.op === 'eq' || a.op === 'neq' || a.op === 'contains') && a.value === undefined)
    throw invalid(`filter contact_attribute.value: needed for ${a.op}`);
  return f;
}

type Q = SelectQueryBuilder<Database, 'conversations', any>;
/** A condition that holds for no row (an OR of nothing). */
const never = sql<boolean>`1 = 0`;

/** The OR of `parts`, or a condition no row meets when there are none (`1 = 0` beside a real condition kept SQLite from using an index on it). */
const anyOf = (eb: ExpressionBuilder<Database, 'conversations'>, parts: Expression<SqlBool>[]) => (parts.length ? eb.or(parts) : never);

/**
 * How the list query names the spam and snoozed flags. A list walks an index in its order (status,
 * last activity) and stops at its page; on SQLite the sidebar counts' index, whose prefix is
 * workspace, status, spam and snoozed_at, looked more selective to the planner, which then read and
 * sorted every open conversation (5,169 rows for a 101-row page: 4–5 ms against 1–2 ms at 150,000
 * conversations, bench/panel-api). As expressions (`+spam`) those columns leave that index's prefix.
 * Only for the common values (not spam, not snoozed): the few spam or snoozed conversations are
 * found through indexes on those columns. Counts keep the plain columns: that index answers them alone.
 */
export interface FlagColumns {
  spam: Expression<number> | 'conversations.spam';
  snoozedAt: Expression<string | null> | 'conversations.snoozed_at';
}
export const plainFlags: FlagColumns = { spam: 'conversations.spam', snoozedAt: 'conversations.snoozed_at' };
export const unindexedFlags: FlagColumns = { spam: sql<number>`+conversations.spam`, snoozedAt: sql<string | null>`+conversations.snoozed_at` };

/** Applies a filter's conditions to a query over `conversations` (the list's and the counts'). */
export async function applyConditions(db: Db, access: Access, f: ViewFilter, now: Date, q: Q, flags: FlagColumns = plainFlags): Promise<Q> {
  const me = access.actor.kind === 'member' ? access.actor.personId : null;
  if (f.status?.length) q = q.where('conversations.status', 'in', f.status);
  if (f.inbox_id?.length) q = q.where('conversations.inbox_id', 'in', f.inbox_id);
  if (f.channel_kind?.length) q = q.where('conversations.source', 'in', f.channel_kind);
  if (f.assignee_id?.length) {
    const ids = f.assignee_id.flatMap((x) => (x === 'me' ? (me ? [me] : []) : x === 'none' ? [] : [x]));
    const unassigned = f.assignee_id.includes('none');
    q = q.where((eb) =>
      anyOf(eb, [...(ids.length ? [eb('conversations.assignee_id', 'in', ids)] : []), ...(unassigned ? [eb('conversations.assignee_id', 'is', null)] : [])]),
    );
  }
  if (f.team_id?.length) {
    const mine = f.team_id.includes('mine') && me ? await teamIdsOfMember(db, access.workspaceId, me) : [];
    const ids = [...mine, ...f.team_id.filter((x) => x !== 'mine' && x !== 'none')];
    const noTeam = f.team_id.includes('none');
    q = q.where((eb) =>
      anyOf(eb, [...(ids.length ? [eb('conversations.team_id', 'in', ids)] : []), ...(noTeam ? [eb('conversations.team_id', 'is', null)] : [])]),
    );
  }
  if (f.priority?.length) {
    const set = f.priority.filter((p) => p !== 'none') as string[];
    const unset = f.priority.includes('none');
    q = q.where((eb) =>
      anyOf(eb, [...(set.length ? [eb('conversations.priority', 'in', set as never)] : []), ...(unset ? [eb('conversations.priority', 'is', null)] : [])]),
    );
  }
  const labelled = (eb: ExpressionBuilder<Database, 'conversations'>, labels: string[]) =>
    eb.exists(
      eb
        .selectFrom('conversation_labels')
        .select('conversation_labels.label')
        .whereRef('conversation_labels.conversation_id', '=', 'conversations.id')
        .where('conversation_labels.label', 'in', labels),
    );
  if (f.label?.any?.length) {
    const any = f.label.any;
    q = q.where((eb) => labelled(eb, any));
  }
  for (const l of new Set(f.label?.all ?? [])) q = q.where((eb) => labelled(eb, [l]));
  if (f.label?.none?.length) {
    const no = f.label.none;
    q = q.where((eb) => eb.not(labelled(eb, no)));
  }
  if (f.snoozed !== undefined) q = q.where(f.snoozed ? 'conversations.snoozed_at' : flags.snoozedAt, f.snoozed ? 'is not' : 'is', null);
  else if (f.status?.includes('open')) q = q.where(flags.snoozedAt, 'is', null);
  if (f.sla) {
    const at = now.toISOString();
    if (f.sla === 'none') q = q.where('conversations.sla_due_at', '=', NOTHING_DUE);
    else if (f.sla === 'breached') q = q.where('conversations.sla_due_at', '<=', at);
    else q = q.where('conversations.sla_due_at', '>', at).where('conversations.sla_due_at', '<', NOTHING_DUE);
  }
  if (f.imported !== undefined) q = q.where('conversations.imported', '=', f.imported ? 1 : 0);
  if (f.spam !== undefined) q = q.where(f.spam ? 'conversations.spam' : flags.spam, '=', f.spam ? 1 : 0);
  if (f.created?.after) q = q.where('conversations.created_at', '>=', iso(f.created.after));
  if (f.created?.before) q = q.where('conversations.created_at', '<', iso(f.created.before));
  if (f.last_activity?.after) q = q.where('conversations.last_message_at', '>=', iso(f.last_activity.after));
  if (f.last_activity?.before) q = q.where('conversations.last_message_at', '<', iso(f.last_activity.before));
  if (f.contact_attribute) {
    const a = f.contact_attribute;
    const matching = contactIdsWithAttribute(db, access.workspaceId, a.key, a.op === 'absent' || a.op === 'neq' ? 'exists' : a.op, a.value);
    if (a.op === 'absent') q = q.where('conversations.contact_id', 'not in', matching);
    else if (a.op === 'neq') q = q.where('conversations.contact_id', 'not in', contactIdsWithAttribute(db, access.workspaceId, a.key, 'eq', a.value));
    else q = q.where('conversations.contact_id', 'in', matching);
  }
  if (f.custom_fields?.length) {
    // A field deleted after the view was saved: its condition holds for nothing (the view shows it empty).
    const conditions = await customFieldConditions(db, access.workspaceId, 'conversation', f.custom_fields).catch(() => null);
    q = q.where(conditions ? matchCustomFields(conditions, 'conversations.id') : sql<SqlBool>`1 = 0`);
  }
  if (f.text) {
    const pattern = `%${f.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const like = isPostgres(db as never) ? sql.raw('ilike') : sql.raw('like');
    q = q.where(
      (eb) =>
        sql<boolean>`(${eb.ref('conversations.subject')} ${like} ${pattern} escape '\\' or ${eb.ref('conversations.preview')} ${like} ${pattern} escape '\\')`,
    );
  }
  return q;
}

/** Stored times are ISO 8601 UTC with milliseconds; a bound given with an offset is compared the same way. */
const iso = (s: string) => new Date(s).toISOString();
