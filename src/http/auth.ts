// The HTTP side of credentials: reading the Authorization header or the session cookie, the
// same-origin check for cookie requests, and caching the answer on the request. Deciding who the
// credential belongs to and what it reaches is src/auth/credentials.ts.
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Access } from '../auth/access.js';
import { type Identity, KEY_PREFIX, resolveCredential, resolveMembership } from '../auth/credentials.js';
import type { Ctx } from '../context.js';
import { AppError, forbidden, unauthorized } from '../platform/errors.js';
import { andThen, type MaybePromise } from '../platform/maybe-promise.js';
import type { AppEnv } from './app.js';

export const SESSION_COOKIE = 'svc_session';
export const WORKSPACE_HEADER = 'svc-workspace';

/** The session cookie: HttpOnly, SameSite=Lax, Secure when SVC_PUBLIC_URL is https. */
export function setSessionCookie(c: Context<AppEnv>, ctx: Ctx, token: string, expiresAt: string): void {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'Lax',
    secure: ctx.config.publicUrl.startsWith('https:'),
    path: '/',
    expires: new Date(expiresAt),
  });
}

export function clearSessionCookie(c: Context<AppEnv>, ctx: Ctx): void {
  deleteCookie(c, SESSION_COOKIE, { path: '/', secure: ctx.config.publicUrl.startsWith('https:') });
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a browser sent this request from the server's own origin. The Origin header (or, without
 * it, Sec-Fetch-Site) decides; a request with neither comes from a non-browser client and passes.
 * The own origin is SVC_PUBLIC_URL's or the one the Host header names (a cross-site page cannot set Host).
 */
export function isSameOrigin(c: Context<AppEnv>, publicUrl: string): boolean {
  const origin = c.req.header('origin');
  if (origin === undefined) {
    const site = c.req.header('sec-fetch-site');
    return site === undefined || site === 'same-origin' || site === 'none';
  }
  if (origin === new URL(publicUrl).origin) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false; // "null" (sandboxed frames, privacy redirects) and anything unparsable
  }
  return host === c.req.header('host');
}

/** 403 for a cross-site browser request that would act with the session cookie (CSRF). */
export function requireSameOrigin(c: Context<AppEnv>, ctx: Ctx): void {
  if (!isSameOrigin(c, ctx.config.publicUrl)) {
    throw forbidden(
      'cross-site request refused: requests that use the session cookie must come from the panel’s own origin (API clients send Authorization: Bearer instead)',
    );
  }
}

function credential(c: Context<AppEnv>, ctx: Ctx): string | undefined {
  const header = c.req.header('authorization');
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw unauthorized('the Authorization header must be "Bearer <key or session token>"');
    return m[1];
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  // The cookie rides along on cross-site requests a page makes; only the panel's own may use it to
  // change anything or to open the realtime socket.
  if (cookie && (!SAFE_METHODS.has(c.req.method) || c.req.header('upgrade')?.toLowerCase() === 'websocket')) requireSameOrigin(c, ctx);
  return cookie;
}

/** Who is calling; 401 without valid credentials. At once for a cached API key on SQLite, a promise otherwise. */
export function requireIdentity(c: Context<AppEnv>, ctx: Ctx): MaybePromise<Identity> {
  return identityFor(c, ctx, false);
}

/** The workspace a session's request names (Svc-Workspace; ?workspace= for clients that cannot send headers, a browser's WebSocket). */
function namedWorkspace(c: Context<AppEnv>): string | undefined {
  return c.req.header(WORKSPACE_HEADER) ?? c.req.query('workspace');
}

/** `withWorkspace`: a session's lookup is given the named workspace (an API key's has its own). */
function identityFor(c: Context<AppEnv>, ctx: Ctx, withWorkspace: boolean): MaybePromise<Identity> {
  const cached = c.get('identity');
  if (cached) return cached;
  const token = credential(c, ctx);
  if (!token) throw unauthorized('missing credentials: send Authorization: Bearer <API key>');
  const workspaceId = withWorkspace && !token.startsWith(KEY_PREFIX) ? namedWorkspace(c) : undefined;
  return andThen(resolveCredential(ctx, token, workspaceId), (identity) => {
    if (!identity) throw unauthorized('the key or session is unknown, revoked or expired');
    c.set('identity', identity);
    return identity;
  });
}

/** The signed-in person when the request carries a live session; undefined without (or with a stale) one. API keys: 403. */
export async function optionalPerson(c: Context<AppEnv>, ctx: Ctx) {
  if (!c.req.header('authorization') && !getCookie(c, SESSION_COOKIE)) return undefined;
  try {
    return await requirePerson(c, ctx);
  } catch (error) {
    if (error instanceof AppError && error.status === 401) return undefined;
    throw error;
  }
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
export function requireAccess(c: Context<AppEnv>, ctx: Ctx): MaybePromise<Access> {
  const cached = c.get('access');
  if (cached) return cached;
  // The named workspace goes with the credential: a session's one epoch read can bring its row.
  return andThen(identityFor(c, ctx, true), (identity) => {
    if (identity.kind === 'api_key') {
      c.set('access', identity.access);
      return identity.access;
    }
    return andThen(resolveMembership(ctx, identity, namedWorkspace(c)), (access) => {
      c.set('access', access);
      return access;
    });
  });
}
