// SLA policies per inbox (issue 35): one default ('' priority) and optional ones per priority,
// each with targets in minutes of the inbox's business hours. Validated with every problem named
// by its field; a refused policy changes nothing.
import type { Ctx } from '../context.js';
import type { Db, InboxSlaPoliciesTable } from '../db/schema.js';
import { cachedReactionSetting } from '../events/settings-cache.js';
import type { InboxRow } from '../inboxes/store.js';
import { iso } from '../platform/clock.js';
import { invalid } from '../platform/errors.js';
import { type Policy, SLA_TARGETS } from './engine.js';

export const SLA_PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;
/** The longest target: a year of minutes. */
export const MAX_TARGET_MINUTES = 366 * 24 * 60;

export type Targets = Partial<Record<(typeof SLA_TARGETS)[number], number | null>>;
export interface SlaPolicyInput {
  /** null: no SLA for the inbox. */
  default: Targets | null;
  by_priority?: Partial<Record<(typeof SLA_PRIORITIES)[number], Targets | null>>;
}

type Issue = { path: string; message: string };

function checkTargets(t: Targets, path: string, issues: Issue[]): Policy {
  const out = {} as Policy;
  for (const target of SLA_TARGETS) {
    const v = t[target] ?? null;
    if (v !== null && (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_TARGET_MINUTES))
      issues.push({ path: `${path}.${target}_minutes`, message: `whole minutes from 1 to ${MAX_TARGET_MINUTES}, or null` });
    out[target] = v;
  }
  return out;
}

const rowOf = (p: Policy) => ({
  first_response_minutes: p.first_response,
  next_response_minutes: p.next_response,
  resolution_minutes: p.resolution,
});
const policyOf = (r: Pick<InboxSlaPoliciesTable, 'first_response_minutes' | 'next_response_minutes' | 'resolution_minutes'>): Policy => ({
  first_response: r.first_response_minutes,
  next_response: r.next_response_minutes,
  resolution: r.resolution_minutes,
});

/** The policy a conversation of this priority follows: the priority's own, else the inbox's default; null: none. */
export async function policyFor(db: Db, inboxId: string, priority: string | null): Promise<Policy | null> {
  // The inbox's few policies, cached while the reaction settings epoch holds (migration 0066).
  const rows = await cachedReactionSetting(db, `sla-policies:${inboxId}`, () =>
    db
      .selectFrom('inbox_sla_policies')
      .select(['priority', 'first_response_minutes', 'next_response_minutes', 'resolution_minutes'])
      .where('inbox_id', '=', inboxId)
      .execute(),
  );
  const row = rows.find((r) => r.priority === priority) ?? rows.find((r) => r.priority === '');
  return row ? policyOf(row) : null;
}

type ShownTargets = Record<`${(typeof SLA_TARGETS)[number]}_minutes`, number | null>;
const shown = (p: Policy): ShownTargets => ({
  first_response_minutes: p.first_response,
  next_response_minutes: p.next_response,
  resolution_minutes: p.resolution,
});

export async function getSlaPolicy(ctx: Pick<Ctx, 'db'>, inbox: Pick<InboxRow, 'id'>) {
  const rows = await ctx.db.selectFrom('inbox_sla_policies').selectAll().where('inbox_id', '=', inbox.id).execute();
  const def = rows.find((r) => r.priority === '');
  const byPriority: Partial<Record<(typeof SLA_PRIORITIES)[number], ShownTargets>> = {};
  for (const p of SLA_PRIORITIES) {
    const r = rows.find((x) => x.priority === p);
    if (r) byPriority[p] = shown(policyOf(r));
  }
  const updated =
    rows
      .map((r) => r.updated_at)
      .sort()
      .at(-1) ?? null;
  return { inbox_id: inbox.id, default: def ? shown(policyOf(def)) : null, by_priority: byPriority, updated_at: updated };
}

/** Input as the API takes it (`…_minutes` fields). */
export type SlaPolicyBody = { default: Partial<ShownTargets> | null; by_priority?: Partial<Record<string, Partial<ShownTargets> | null>> };

function targetsOfBody(b: Partial<ShownTargets>): Targets {
  return { first_response: b.first_response_minutes ?? null, next_response: b.next_response_minutes ?? null, resolution: b.resolution_minutes ?? null };
}

/** Replaces the inbox's policies (validated first). */
export async function setSlaPolicy(ctx: Pick<Ctx, 'db' | 'clock'>, inbox: Pick<InboxRow, 'id' | 'workspace_id'>, body: SlaPolicyBody) {
  const issues: Issue[] = [];
  const rows: { priority: string; policy: Policy }[] = [];
  if (body.default) rows.push({ priority: '', policy: checkTargets(targetsOfBody(body.default), 'default', issues) });
  for (const [priority, t] of Object.entries(body.by_priority ?? {})) {
    if (!(SLA_PRIORITIES as readonly string[]).includes(priority)) {
      issues.push({ path: `by_priority.${priority}`, message: `a priority: ${SLA_PRIORITIES.join(', ')}` });
      continue;
    }
    if (t) rows.push({ priority, policy: checkTargets(targetsOfBody(t), `by_priority.${priority}`, issues) });
  }
  if (issues.length) throw invalid(`${issues[0].path}: ${issues[0].message}`, { issues });
  const now = iso(ctx.clock.now());
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('inbox_sla_policies').where('inbox_id', '=', inbox.id).execute();
    if (rows.length)
      await trx
        .insertInto('inbox_sla_policies')
        .values(rows.map((r) => ({ inbox_id: inbox.id, workspace_id: inbox.workspace_id, priority: r.priority, ...rowOf(r.policy), updated_at: now })))
        .execute();
  });
  return getSlaPolicy(ctx, inbox);
}
