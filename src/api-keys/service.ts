import { isScope, SCOPES } from '../auth/access.js';
import { KEY_PREFIX } from '../auth/credentials.js';
import type { Ctx } from '../context.js';
import type { ApiKeysTable, Db } from '../db/schema.js';
import { missingInboxIds } from '../inboxes/store.js';
import { iso } from '../platform/clock.js';
import { sha256Hex } from '../platform/crypto.js';
import { invalid, notFound } from '../platform/errors.js';
import { newId, randomText } from '../platform/ids.js';
import { charCount } from '../platform/text.js';

export type ApiKeyRow = ApiKeysTable;
type C = Pick<Ctx, 'db' | 'clock'>;

const VISIBLE_CHARS = 8;

export async function createApiKey(
  ctx: C,
  input: { workspaceId: string; name: string; scopes?: string[]; inboxIds?: string[]; expiresAt?: string | null },
): Promise<{ key: ApiKeyRow; secret: string }> {
  const name = input.name.trim();
  if (!name || charCount(name) > 200) throw invalid('key name must be 1 to 200 characters');
  const scopes = input.scopes && input.scopes.length > 0 ? [...new Set(input.scopes)] : [...SCOPES];
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw invalid(`unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')}`);
  let inboxIds: string[] | null = null;
  if (input.inboxIds && input.inboxIds.length > 0) {
    inboxIds = [...new Set(input.inboxIds)];
    const missing = await missingInboxIds(ctx.db, input.workspaceId, inboxIds, { live: true });
    if (missing.length) throw invalid(`no inbox ${missing.join(', ')} in this workspace`);
  }
  const now = ctx.clock.now();
  if (input.expiresAt && Date.parse(input.expiresAt) <= now.getTime()) throw invalid('expiry must be in the future');
  const secret = KEY_PREFIX + randomText(32);
  const key: ApiKeyRow = {
    id: newId('key'),
    workspace_id: input.workspaceId,
    name,
    prefix: secret.slice(0, KEY_PREFIX.length + VISIBLE_CHARS),
    secret_hash: sha256Hex(secret),
    scopes: JSON.stringify(scopes),
    inbox_ids: inboxIds ? JSON.stringify(inboxIds) : null,
    created_at: iso(now),
    last_used_at: null,
    expires_at: input.expiresAt ? iso(Date.parse(input.expiresAt)) : null,
    revoked_at: null,
  };
  await ctx.db.insertInto('api_keys').values(key).execute();
  return { key, secret };
}

export async function listApiKeys(ctx: C, workspaceId: string): Promise<ApiKeyRow[]> {
  return ctx.db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).orderBy('id', 'desc').execute();
}

/** Revokes a key by id (optionally only within one workspace). Idempotent. */
export async function revokeApiKey(ctx: C, id: string, workspaceId?: string): Promise<ApiKeyRow> {
  let q = ctx.db.selectFrom('api_keys').selectAll().where('id', '=', id);
  if (workspaceId) q = q.where('workspace_id', '=', workspaceId);
  const key = await q.executeTakeFirst();
  if (!key) throw notFound('API key');
  if (!key.revoked_at) {
    key.revoked_at = iso(ctx.clock.now());
    await ctx.db.updateTable('api_keys').set({ revoked_at: key.revoked_at }).where('id', '=', id).execute();
  }
  return key;
}

export function formatApiKey(k: ApiKeyRow) {
  return {
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    created_at: k.created_at,
    last_used_at: k.last_used_at,
    revoked_at: k.revoked_at,
    expires_at: k.expires_at,
    inbox_ids: k.inbox_ids ? (JSON.parse(k.inbox_ids) as string[]) : null,
    scopes: JSON.parse(k.scopes) as string[],
  };
}

/**
 * An inbox was deleted: it leaves the inbox limit of every key that listed it (in the caller's
 * transaction). A key whose limit listed only that inbox is revoked: it could reach nothing, and an
 * empty limit must never read as "every inbox". Returns the ids of the keys changed and revoked.
 */
export async function removeInboxFromKeys(
  db: Db,
  clock: Ctx['clock'],
  workspaceId: string,
  inboxId: string,
): Promise<{ changed: string[]; revoked: string[] }> {
  const keys = await db
    .selectFrom('api_keys')
    .select(['id', 'inbox_ids', 'revoked_at'])
    .where('workspace_id', '=', workspaceId)
    .where('inbox_ids', 'is not', null)
    .execute();
  const out = { changed: [] as string[], revoked: [] as string[] };
  for (const key of keys) {
    const ids = JSON.parse(key.inbox_ids!) as string[];
    if (!ids.includes(inboxId)) continue;
    const left = ids.filter((id) => id !== inboxId);
    if (left.length > 0) {
      await db
        .updateTable('api_keys')
        .set({ inbox_ids: JSON.stringify(left) })
        .where('id', '=', key.id)
        .execute();
      out.changed.push(key.id);
    } else {
      await db
        .updateTable('api_keys')
        .set({ revoked_at: key.revoked_at ?? iso(clock.now()) })
        .where('id', '=', key.id)
        .execute();
      out.revoked.push(key.id);
    }
  }
  return out;
}
