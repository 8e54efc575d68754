// Macros (issue 36): named lists of the rules' actions that a member runs by hand on one
// conversation or up to 100. Personal macros belong to one member and only they see them; shared
// ones every member sees and runs, and owners and admins (keys with workspace:manage) manage.
import { type Access, authorize, isAllowed, requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ConversationRow } from '../conversations/format.js';
import { authorFromAccess, conversationView, getConversationFor } from '../conversations/service.js';
import type { Db, MacrosTable } from '../db/schema.js';
import { announceEvents } from '../events/service.js';
import { iso } from '../platform/clock.js';
import { AppError, conflict, forbidden, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { applyActions, planActions } from './actions.js';
import { loadFacts } from './conditions.js';
import { checkReferences } from './references.js';
import { type Action, MAX_MACRO_CONVERSATIONS, MAX_MACROS_PER_OWNER } from './schema.js';

type C = Pick<Ctx, 'db' | 'clock' | 'hub'>;
type MacroRow = MacrosTable;

export function formatMacro(m: MacroRow) {
  return {
    id: m.id,
    name: m.name,
    shared: m.shared === 1,
    owner_member_id: m.owner_person_id,
    actions: JSON.parse(m.actions) as Action[],
    created_at: m.created_at,
    updated_at: m.updated_at,
  };
}

const personOf = (access: Access) => (access.actor.kind === 'member' ? access.actor.personId : null);

/** A macro the caller sees (404 otherwise: other members' personal macros stay secret). */
async function visibleMacro(db: Db, access: Access, id: string): Promise<MacroRow> {
  const row = await db.selectFrom('macros').selectAll().where('id', '=', id).where('workspace_id', '=', access.workspaceId).executeTakeFirst();
  if (!row || (row.shared !== 1 && row.owner_person_id !== personOf(access))) throw notFound('macro');
  return row;
}

/** Shared macros: owners and admins; personal ones: their member. */
function requireEditor(access: Access, shared: boolean): void {
  if (shared) authorize(access, 'automation:manage');
  else if (access.actor.kind !== 'member') throw forbidden('personal macros belong to members; API keys manage shared ones');
}

export async function listMacros(ctx: C, access: Access) {
  requireScope(access, 'conversations:read');
  const person = personOf(access);
  const rows = await ctx.db
    .selectFrom('macros')
    .selectAll()
    .where('workspace_id', '=', access.workspaceId)
    .where((eb) => (person ? eb.or([eb('shared', '=', 1), eb('owner_person_id', '=', person)]) : eb('shared', '=', 1)))
    .orderBy('name')
    .orderBy('id')
    .execute();
  return { data: rows.map(formatMacro), next_cursor: null };
}

export async function createMacro(ctx: C, access: Access, input: { name: string; shared?: boolean; actions: Action[] }) {
  const shared = input.shared ?? false;
  requireEditor(access, shared);
  const owner = shared ? null : personOf(access);
  await checkReferences(ctx.db, access.workspaceId, { actions: input.actions, ownerPersonId: owner });
  let q = ctx.db
    .selectFrom('macros')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', access.workspaceId);
  q = owner ? q.where('owner_person_id', '=', owner) : q.where('shared', '=', 1);
  if (Number((await q.executeTakeFirstOrThrow()).n) >= MAX_MACROS_PER_OWNER) throw conflict(`at most ${MAX_MACROS_PER_OWNER} macros here`, 'too_many_macros');
  const now = iso(ctx.clock.now());
  const row: MacroRow = {
    id: newId('mac', ctx.clock.now().getTime()),
    workspace_id: access.workspaceId,
    name: input.name.trim(),
    shared: shared ? 1 : 0,
    owner_person_id: owner,
    actions: JSON.stringify(input.actions),
    created_at: now,
    updated_at: now,
  };
  await ctx.db.insertInto('macros').values(row).execute();
  return formatMacro(row);
}

export async function updateMacro(ctx: C, access: Access, id: string, input: { name?: string; shared?: boolean; actions?: Action[] }) {
  requireScope(access, 'conversations:read');
  const current = await visibleMacro(ctx.db, access, id);
  requireEditor(access, current.shared === 1);
  const shared = input.shared ?? current.shared === 1;
  if (shared !== (current.shared === 1)) requireEditor(access, shared);
  const owner = shared ? null : (current.owner_person_id ?? personOf(access));
  if (input.actions) await checkReferences(ctx.db, access.workspaceId, { actions: input.actions, ownerPersonId: owner });
  const set: Partial<MacroRow> = { updated_at: iso(ctx.clock.now()), shared: shared ? 1 : 0, owner_person_id: owner };
  if (input.name !== undefined) set.name = input.name.trim();
  if (input.actions !== undefined) set.actions = JSON.stringify(input.actions);
  await ctx.db.updateTable('macros').set(set).where('id', '=', id).execute();
  return formatMacro({ ...current, ...set });
}

export async function deleteMacro(ctx: C, access: Access, id: string): Promise<void> {
  requireScope(access, 'conversations:read');
  const current = await visibleMacro(ctx.db, access, id);
  requireEditor(access, current.shared === 1);
  await ctx.db.deleteFrom('macros').where('id', '=', id).execute();
}

/** Runs the macro's actions on one conversation in the given transaction; what changed nothing is left out. */
async function runOn(ctx: C, trx: Db, access: Access, macro: MacroRow, conversationId: string): Promise<ConversationRow> {
  const tx = { db: trx, clock: ctx.clock };
  const conversation = await getConversationFor(tx, access, conversationId);
  const facts = await loadFacts(trx, conversation, { at: ctx.clock.now() });
  const actions = JSON.parse(macro.actions) as Action[];
  const plan = await planActions(trx, facts, actions, {});
  const applied = await applyActions(tx, facts, plan, { author: authorFromAccess(access), personId: personOf(access) });
  return applied.conversation;
}

export async function runMacro(ctx: C, access: Access, macroId: string, conversationId: string) {
  requireScope(access, 'conversations:write');
  const macro = await visibleMacro(ctx.db, access, macroId);
  const conversation = await ctx.db.transaction().execute((trx) => runOn(ctx, trx, access, macro, conversationId));
  announceEvents(ctx);
  return conversationView(ctx.db, conversation);
}

/** The macro on each conversation, each in its own transaction: one that fails leaves the others done. */
export async function runMacroOnMany(ctx: C, access: Access, macroId: string, conversationIds: readonly string[]) {
  requireScope(access, 'conversations:write');
  const macro = await visibleMacro(ctx.db, access, macroId);
  const ids = [...new Set(conversationIds)].slice(0, MAX_MACRO_CONVERSATIONS);
  const results: { conversation_id: string; ok: boolean; error?: { code: string; message: string } }[] = [];
  for (const id of ids) {
    try {
      await ctx.db.transaction().execute((trx) => runOn(ctx, trx, access, macro, id));
      results.push({ conversation_id: id, ok: true });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      results.push({ conversation_id: id, ok: false, error: { code: error.code, message: error.message } });
    }
  }
  announceEvents(ctx);
  return { results };
}
