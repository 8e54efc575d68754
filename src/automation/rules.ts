// Automation rules (issue 36): owners and admins (keys with workspace:manage) keep an ordered list
// per workspace. Positions stay 0..n-1: a rule put at a position pushes the ones from there down.
import { type Access, authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { AutomationRulesTable, Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { iso } from '../platform/clock.js';
import { conflict, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { checkReferences } from './references.js';
import { type Action, type Condition, MAX_RULES, type Trigger } from './schema.js';

export type RuleRow = AutomationRulesTable;
type C = Pick<Ctx, 'db' | 'clock'>;

export interface Rule {
  id: string;
  workspaceId: string;
  name: string;
  enabled: boolean;
  position: number;
  trigger: Trigger;
  conditions: { match: 'all' | 'any'; items: Condition[] };
  actions: Action[];
}

export function parseRule(row: RuleRow): Rule {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    enabled: row.enabled === 1,
    position: row.position,
    trigger: JSON.parse(row.trigger),
    conditions: JSON.parse(row.conditions),
    actions: JSON.parse(row.actions),
  };
}

export function formatRule(row: RuleRow) {
  const r = parseRule(row);
  return {
    id: r.id,
    name: r.name,
    enabled: r.enabled,
    position: r.position,
    trigger: r.trigger,
    conditions: r.conditions,
    actions: r.actions,
    created_at: row.created_at,
    updated_at: row.updated_at,
    last_run_at: row.last_run_at,
  };
}

export interface RuleInput {
  name?: string;
  enabled?: boolean;
  trigger?: Trigger;
  conditions?: { match: 'all' | 'any'; items: Condition[] };
  actions?: Action[];
  position?: number;
}

async function rulesOf(db: Db, workspaceId: string): Promise<RuleRow[]> {
  return db.selectFrom('automation_rules').selectAll().where('workspace_id', '=', workspaceId).orderBy('position').orderBy('id').execute();
}

/** The enabled rules of a workspace, in order (the engine and the reaction read them). */
export async function enabledRules(db: Db, workspaceId: string): Promise<Rule[]> {
  const rows = await db
    .selectFrom('automation_rules')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('enabled', '=', 1)
    .orderBy('position')
    .orderBy('id')
    .execute();
  return rows.map(parseRule);
}

export async function findRule(db: Db, workspaceId: string, id: string): Promise<RuleRow | undefined> {
  return db.selectFrom('automation_rules').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
}

async function ruleFor(db: Db, access: Access, id: string): Promise<RuleRow> {
  const row = await findRule(db, access.workspaceId, id);
  if (!row) throw notFound('automation rule');
  return row;
}

/** Writes the order: `ids` in their new order get positions 0..n-1. */
async function renumber(db: Db, ids: readonly string[]): Promise<void> {
  for (const [position, id] of ids.entries()) await db.updateTable('automation_rules').set({ position }).where('id', '=', id).execute();
}

function checkName(raw: string): string {
  return raw.trim().replace(/\s+/g, ' ');
}

export async function listRules(ctx: C, access: Access) {
  authorize(access, 'automation:manage');
  return { data: (await rulesOf(ctx.db, access.workspaceId)).map(formatRule), next_cursor: null };
}

export async function getRule(ctx: C, access: Access, id: string) {
  authorize(access, 'automation:manage');
  return formatRule(await ruleFor(ctx.db, access, id));
}

export async function createRule(ctx: C, access: Access, input: Required<Pick<RuleInput, 'name' | 'trigger' | 'actions'>> & RuleInput) {
  authorize(access, 'automation:manage');
  const conditions = input.conditions ?? { match: 'all' as const, items: [] };
  await checkReferences(ctx.db, access.workspaceId, { conditions: conditions.items, actions: input.actions });
  return inTransaction(ctx.db, async (trx) => {
    const rows = await rulesOf(trx, access.workspaceId);
    if (rows.length >= MAX_RULES) throw conflict(`a workspace has at most ${MAX_RULES} automation rules`, 'too_many_rules');
    const now = iso(ctx.clock.now());
    const row: RuleRow = {
      id: newId('rule', ctx.clock.now().getTime()),
      workspace_id: access.workspaceId,
      name: checkName(input.name),
      enabled: input.enabled ? 1 : 0,
      position: rows.length,
      trigger_type: input.trigger.type,
      trigger: JSON.stringify(input.trigger),
      conditions: JSON.stringify(conditions),
      actions: JSON.stringify(input.actions),
      created_at: now,
      updated_at: now,
      last_run_at: null,
    };
    await trx.insertInto('automation_rules').values(row).execute();
    if (input.position !== undefined && input.position < rows.length) {
      const ids = rows.map((r) => r.id);
      ids.splice(input.position, 0, row.id);
      await renumber(trx, ids);
      row.position = input.position;
    }
    return formatRule(row);
  });
}

export async function updateRule(ctx: C, access: Access, id: string, input: RuleInput) {
  authorize(access, 'automation:manage');
  await ruleFor(ctx.db, access, id);
  await checkReferences(ctx.db, access.workspaceId, { conditions: input.conditions?.items, actions: input.actions });
  return inTransaction(ctx.db, async (trx) => {
    const current = await ruleFor(trx, access, id);
    const set: Partial<RuleRow> = { updated_at: iso(ctx.clock.now()) };
    if (input.name !== undefined) set.name = checkName(input.name);
    if (input.enabled !== undefined) set.enabled = input.enabled ? 1 : 0;
    if (input.trigger !== undefined) {
      set.trigger_type = input.trigger.type;
      set.trigger = JSON.stringify(input.trigger);
    }
    if (input.conditions !== undefined) set.conditions = JSON.stringify(input.conditions);
    if (input.actions !== undefined) set.actions = JSON.stringify(input.actions);
    await trx.updateTable('automation_rules').set(set).where('id', '=', id).execute();
    if (input.position !== undefined && input.position !== current.position) {
      const ids = (await rulesOf(trx, access.workspaceId)).map((r) => r.id).filter((r) => r !== id);
      ids.splice(Math.min(input.position, ids.length), 0, id);
      await renumber(trx, ids);
    }
    return formatRule((await findRule(trx, access.workspaceId, id))!);
  });
}

export async function deleteRule(ctx: C, access: Access, id: string): Promise<void> {
  authorize(access, 'automation:manage');
  await inTransaction(ctx.db, async (trx) => {
    await ruleFor(trx, access, id);
    await trx.deleteFrom('automation_rules').where('id', '=', id).execute();
    await renumber(
      trx,
      (await rulesOf(trx, access.workspaceId)).map((r) => r.id),
    );
  });
}

export async function deleteWorkspaceRules(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  let deleted = 0;
  for (const table of ['automation_runs', 'automation_replies_sent', 'automation_rules', 'macros'] as const) {
    const ids = await ctx.db
      .selectFrom(table)
      .select(table === 'automation_replies_sent' ? 'rule_id as id' : 'id')
      .where('workspace_id', '=', workspaceId)
      .limit(batch - deleted)
      .execute();
    if (!ids.length) continue;
    if (table === 'automation_replies_sent')
      deleted += Number(
        (
          await ctx.db
            .deleteFrom(table)
            .where('workspace_id', '=', workspaceId)
            .where(
              'rule_id',
              'in',
              ids.map((r) => r.id),
            )
            .executeTakeFirst()
        ).numDeletedRows,
      );
    else
      deleted += Number(
        (
          await ctx.db
            .deleteFrom(table)
            .where(
              'id',
              'in',
              ids.map((r) => r.id),
            )
            .executeTakeFirst()
        ).numDeletedRows,
      );
    if (deleted >= batch) break;
  }
  return deleted;
}
