// Saved replies: text a member inserts into a reply from the composer (`#` opens the picker).
// Workspace replies are shared by every member and written by owners and admins (or keys with
// workspace:manage); personal replies belong to one member, who alone sees and edits them. Keys
// read workspace replies only (with conversations:write: they exist to write replies).

import { z } from '@hono/zod-openapi';
import { sql } from 'kysely';
import { type Access, requireManager, requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { isUniqueViolation } from '../db/retry.js';
import type { Db, SavedRepliesTable, SavedReplyScope } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { conflict, forbidden, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import { charCount } from '../platform/text.js';
import { formattedInput } from './formatted.js';
import { checkPlaceholders } from './placeholders.js';

export type SavedReplyRow = SavedRepliesTable;
type C = Pick<Ctx, 'db' | 'clock'>;

export const MAX_NAME_CHARS = 64;
export const MAX_BODY_CHARS = 10_000;
/** The html of a formatted reply: markup around at most MAX_BODY_CHARS of text. */
export const MAX_HTML_CHARS = 50_000;
export const MAX_WORKSPACE_REPLIES = 500;
export const MAX_PERSONAL_REPLIES = 100;
export const MAX_QUERY_CHARS = 100;

export function formatSavedReply(r: SavedReplyRow) {
  return { id: r.id, scope: r.scope, name: r.name, body: r.body, html: r.html, owner_id: r.owner_id, created_at: r.created_at, updated_at: r.updated_at };
}

function personOf(access: Access): string | null {
  return access.actor.kind === 'member' ? access.actor.personId : null;
}

/** Reading and using saved replies: every member; keys with conversations:write. */
export function requireReplyReader(access: Access): void {
  if (access.actor.kind === 'api_key') requireScope(access, 'conversations:write');
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw invalid('name must not be empty', { issues: [{ path: ['name'], message: 'must not be empty' }] });
  if (charCount(name) > MAX_NAME_CHARS)
    throw invalid(`name must be at most ${MAX_NAME_CHARS} characters`, { issues: [{ path: ['name'], message: `at most ${MAX_NAME_CHARS} characters` }] });
  if (/[\p{Cc}]/u.test(name))
    throw invalid('name must be one line without control characters', { issues: [{ path: ['name'], message: 'one line, no control characters' }] });
  return name;
}

/** The reply's text and html (`html` wins over `body`, as on the reply routes), checked. */
function checkText(input: { body?: string; html?: string }): { body: string; html: string | null } {
  const text = formattedInput(input);
  if (!text.body.trim() && input.html !== undefined && input.body === undefined)
    throw invalid('html must not be empty', { issues: [{ path: ['html'], message: 'must not be empty' }] });
  return { body: checkBody(text.body), html: text.html };
}

function checkBody(body: string): string {
  if (!body.trim()) throw invalid('body must not be empty', { issues: [{ path: ['body'], message: 'must not be empty' }] });
  if (charCount(body) > MAX_BODY_CHARS)
    throw invalid(`body must be at most ${MAX_BODY_CHARS} characters`, { issues: [{ path: ['body'], message: `at most ${MAX_BODY_CHARS} characters` }] });
  checkPlaceholders(body, 'body');
  return body;
}

const searchText = (name: string, body: string) => `${name}\n${body}`.toLowerCase();

/** A reply of the workspace by id, whoever may see it (automation checks and uses it). */
export async function findSavedReply(db: Db, workspaceId: string, id: string): Promise<SavedReplyRow | undefined> {
  return db.selectFrom('saved_replies').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/** The reply when the caller may see it (404 otherwise: other members' personal replies stay secret). */
async function visibleReply(db: Db, access: Access, id: string): Promise<SavedReplyRow> {
  const row = await db.selectFrom('saved_replies').selectAll().where('id', '=', id).where('workspace_id', '=', access.workspaceId).executeTakeFirst();
  if (!row || (row.scope === 'personal' && row.owner_id !== personOf(access))) throw notFound('saved reply');
  return row;
}

/**
 * Who may write saved replies at all, before the body says which: every member (personal ones at
 * least); an API key only with what workspace replies need.
 */
export function requireReplyWriter(access: Access): void {
  if (access.actor.kind === 'api_key') requireEditor(access, 'workspace');
}

function requireEditor(access: Access, scope: SavedReplyScope): void {
  if (scope === 'workspace') requireManager(access, 'workspace:manage', { wholeWorkspace: true });
  else if (access.actor.kind !== 'member') throw forbidden('personal saved replies belong to members; API keys use workspace replies');
}

export async function getSavedReply(ctx: C, access: Access, id: string): Promise<SavedReplyRow> {
  requireReplyReader(access);
  return visibleReply(ctx.db, access, id);
}

const listCursor = z.object({ n: z.string(), i: z.string() });

/** Workspace replies and the caller's personal ones, by name; `q` matches name or body, ignoring case. */
export async function listSavedReplies(ctx: C, access: Access, input: { q?: string; scope?: SavedReplyScope; limit?: number; cursor?: string }) {
  requireReplyReader(access);
  const limit = input.limit ?? 50;
  const after = decodeCursor(input.cursor, listCursor);
  const person = personOf(access);
  const owners = input.scope === 'workspace' || !person ? [''] : input.scope === 'personal' ? [person] : ['', person];
  let q = ctx.db.selectFrom('saved_replies').selectAll().where('workspace_id', '=', access.workspaceId).where('owner_key', 'in', owners);
  const words = (input.q ?? '').toLowerCase().trim();
  if (charCount(words) > MAX_QUERY_CHARS) throw invalid(`q must be at most ${MAX_QUERY_CHARS} characters`);
  for (const word of words.split(/\s+/).filter(Boolean)) {
    const pattern = `%${word.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
    q = q.where(sql<boolean>`search_text like ${pattern} escape '\\'`);
  }
  if (after) q = q.where((eb) => eb.or([eb('name_key', '>', after.n), eb.and([eb('name_key', '=', after.n), eb('id', '>', after.i)])]));
  const rows = await q
    .orderBy('name_key')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
  return toPage(rows, limit, (r) => ({ n: r.name_key, i: r.id }), formatSavedReply);
}

async function ensureNameFree(db: Db, row: Pick<SavedReplyRow, 'workspace_id' | 'owner_key' | 'name_key' | 'name'>, exceptId?: string) {
  let q = db
    .selectFrom('saved_replies')
    .select('id')
    .where('workspace_id', '=', row.workspace_id)
    .where('owner_key', '=', row.owner_key)
    .where('name_key', '=', row.name_key);
  if (exceptId) q = q.where('id', '!=', exceptId);
  if (await q.executeTakeFirst()) throw nameTaken(row.name);
}

const nameTaken = (name: string) => conflict(`a saved reply named ${JSON.stringify(name)} already exists here`, 'conflict');

export async function createSavedReply(
  ctx: C,
  access: Access,
  input: { name: string; body?: string; html?: string; scope: SavedReplyScope },
): Promise<SavedReplyRow> {
  requireEditor(access, input.scope);
  const name = checkName(input.name);
  const { body, html } = checkText(input);
  const ownerId = input.scope === 'personal' ? personOf(access) : null;
  const now = iso(ctx.clock.now());
  const row: SavedReplyRow = {
    id: newId('sr'),
    workspace_id: access.workspaceId,
    scope: input.scope,
    owner_id: ownerId,
    owner_key: ownerId ?? '',
    name,
    name_key: name.toLowerCase(),
    body,
    html,
    search_text: searchText(name, body),
    created_by: personOf(access),
    created_at: now,
    updated_at: now,
  };
  try {
    await ctx.db.transaction().execute(async (trx) => {
      const { n } = await trx
        .selectFrom('saved_replies')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('workspace_id', '=', row.workspace_id)
        .where('owner_key', '=', row.owner_key)
        .executeTakeFirstOrThrow();
      const max = input.scope === 'workspace' ? MAX_WORKSPACE_REPLIES : MAX_PERSONAL_REPLIES;
      if (Number(n) >= max) throw conflict(`at most ${max} ${input.scope} saved replies; delete one first`, 'saved_reply_limit', { max });
      await ensureNameFree(trx, row);
      await trx.insertInto('saved_replies').values(row).execute();
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
  return row;
}

export async function updateSavedReply(ctx: C, access: Access, id: string, patch: { name?: string; body?: string; html?: string }): Promise<SavedReplyRow> {
  requireReplyReader(access);
  const current = await visibleReply(ctx.db, access, id);
  requireEditor(access, current.scope);
  const name = patch.name === undefined ? current.name : checkName(patch.name);
  // New text replaces both: a plain body alone makes the reply plain again.
  const { body, html } = patch.body === undefined && patch.html === undefined ? current : checkText(patch);
  const next: SavedReplyRow = {
    ...current,
    name,
    name_key: name.toLowerCase(),
    body,
    html,
    search_text: searchText(name, body),
    updated_at: iso(ctx.clock.now()),
  };
  try {
    await ctx.db.transaction().execute(async (trx) => {
      await ensureNameFree(trx, next, id);
      await trx
        .updateTable('saved_replies')
        .set({ name, name_key: next.name_key, body, html, search_text: next.search_text, updated_at: next.updated_at })
        .where('id', '=', id)
        .execute();
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
  return next;
}

export async function deleteSavedReply(ctx: C, access: Access, id: string): Promise<void> {
  requireReplyReader(access);
  const current = await visibleReply(ctx.db, access, id);
  requireEditor(access, current.scope);
  await ctx.db.deleteFrom('saved_replies').where('id', '=', id).execute();
}

/** Workspace deletion step: saved replies and signatures of a deleted workspace. */
export async function deleteWorkspaceSavedReplies(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  let deleted = 0;
  for (const table of ['saved_replies', 'member_signatures', 'inbox_signatures'] as const) {
    const rows = await ctx.db.selectFrom(table).select('workspace_id').where('workspace_id', '=', workspaceId).limit(1).execute();
    if (!rows.length) continue;
    if (table === 'saved_replies') {
      const ids = (await ctx.db.selectFrom('saved_replies').select('id').where('workspace_id', '=', workspaceId).limit(batch).execute()).map((r) => r.id);
      deleted += Number((await ctx.db.deleteFrom('saved_replies').where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
    } else {
      // A workspace has one row per member or inbox: few enough for one statement.
      deleted += Number((await ctx.db.deleteFrom(table).where('workspace_id', '=', workspaceId).executeTakeFirst()).numDeletedRows);
    }
    return deleted;
  }
  return deleted;
}
