// Resolving credentials (API key or panel session) into who is calling and what they reach.
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { authenticateApiKey, KEY_PREFIX } from '../api-keys/service.js';
import { memberAccess, type Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { Role } from '../db/schema.js';
import { findSession, SESSION_TOKEN_PREFIX } from '../people/service.js';
import { forbidden, invalid, unauthorized } from '../platform/errors.js';
import type { AppEnv } from './app.js';

export const SESSION_COOKIE = 'svc_session';
export const WORKSPACE_HEADER = 'svc-workspace';

export type Identity =
  | { kind: 'session'; personId: string; email: string; sessionId: string }
  | { kind: 'api_key'; access: Access };

function credential(c: Context<AppEnv>): string | undefined {
  const header = c.req.header('authorization');
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw unauthorized('the Authorization header must be "Bearer <key or session token>"');
    return m[1];
  }
  return getCookie(c, SESSION_COOKIE);
}

/** Who is calling; 401 without valid credentials. */
export async function requireIdentity(c: Context<AppEnv>, ctx: Ctx): Promise<Identity> {
  const cached = c.get('identity');
  if (cached) return cached;
  const token = credential(c);
  let identity: Identity | undefined;
  if (token?.startsWith(KEY_PREFIX)) {
    const access = await authenticateApiKey(ctx, token);
    if (access) identity = { kind: 'api_key', access };
  } else if (token?.startsWith(SESSION_TOKEN_PREFIX)) {
    const s = await findSession(ctx, token);
    if (s) identity = { kind: 'session', personId: s.person_id, email: s.email, sessionId: s.session_id };
  }
  if (!identity) throw unauthorized(token ? 'the key or session is unknown, revoked or expired' : 'missing credentials: send Authorization: Bearer <API key>');
  c.set('identity', identity);
  return identity;
}

/** A signed-in person (panel session); API keys are refused for person-level routes. */
export async function requirePerson(c: Context<AppEnv>, ctx: Ctx) {
  const identity = await requireIdentity(c, ctx);
  if (identity.kind !== 'session') throw forbidden('this route needs a signed-in person, not an API key');
  return identity;
}

/**
 * The caller's access to one workspace. Keys belong to one workspace; a person picks one with the
 * Svc-Workspace header, which may be left out when they belong to exactly one.
 */
export async function requireAccess(c: Context<AppEnv>, ctx: Ctx): Promise<Access> {
  const cached = c.get('access');
  if (cached) return cached;
  const identity = await requireIdentity(c, ctx);
  let access: Access;
  if (identity.kind === 'api_key') {
    access = identity.access;
  } else {
    // ?workspace= serves clients that cannot send headers (a browser's WebSocket).
    const wanted = c.req.header(WORKSPACE_HEADER) ?? c.req.query('workspace');
    let q = ctx.db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .select(['memberships.workspace_id', 'memberships.role'])
      .where('memberships.person_id', '=', identity.personId)
      .where('workspaces.deleted_at', 'is', null);
    if (wanted) q = q.where('memberships.workspace_id', '=', wanted);
    const rows = await q.limit(2).execute();
    if (rows.length === 0) throw forbidden(wanted ? 'you are not a member of that workspace' : 'you are not a member of any workspace');
    if (rows.length > 1) throw invalid('you belong to several workspaces; name one in the Svc-Workspace header');
    access = memberAccess(rows[0].workspace_id, identity.personId, rows[0].role as Role, identity.sessionId);
  }
  c.set('access', access);
  return access;
}
