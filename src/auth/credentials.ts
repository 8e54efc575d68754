// Who is calling and whether it still holds: the one place that turns a credential (an API key, a
// panel session) into an identity, a session into a workspace membership (an Access), and tells a
// long-lived connection whether the Access it was given is still valid. HTTP (src/http/auth.ts
// reads the header or cookie and calls these) and the realtime socket use it. The credential tables
// (api_keys, sessions, memberships) are written by their features (api-keys, people, members); this
// file is the only one that reads them to decide about a caller. A widget visitor's session
// (svc_cs_…, bound to one chat channel) is a different credential: src/widget/service.ts.
//
// Answers are cached in ctx.credentialCache while the credentials epoch (one row, moved by triggers
// in the transaction of every change that can end or narrow a credential: migration 0024) stays the
// same. Each lookup reads the epoch first (on SQLite only when a connection changed a row since the
// last read: see keptReads), so a change made by this process, another server process or a `svc`
// command is seen on the very next request; expiry is checked against the clock on every use,
// cached or not.
import type { Ctx } from '../context.js';
import { sqliteChangeStamp } from '../db/change-stamp.js';
import { reusableQuery } from '../db/reusable-query.js';
import type { Role, WorkspacesTable } from '../db/schema.js';
import { DAY, iso, MINUTE } from '../platform/clock.js';
import { sha256Hex } from '../platform/crypto.js';
import type { EpochCache } from '../platform/epoch-cache.js';
import { forbidden, invalid } from '../platform/errors.js';
import { andThen, type MaybePromise } from '../platform/maybe-promise.js';
import { type Access, keyAccess, memberAccess, type Scope } from './access.js';

/** Without credentialCache (a bare db and clock) every lookup reads the rows. */
type C = Pick<Ctx, 'db' | 'clock'> & Partial<Pick<Ctx, 'credentialCache'>>;

/** What the cache keeps: the rows a lookup read, never the secret (keys and sessions by hash). */
/** Times as milliseconds and the scopes as a set: a cached key is used on every request, parsed once. */
type CachedKey = {
  kind: 'api_key';
  keyId: string;
  workspaceId: string;
  scopes: ReadonlySet<Scope>;
  inboxIds: string[] | null;
  expiresMs: number | null;
  lastUsedMs: number | null;
};
type CachedCredential =
  | CachedKey
  | { kind: 'session'; sessionId: string; personId: string; email: string; expiresAt: string; lastUsedAt: string }
  | { kind: 'membership'; membershipId: string; workspaceId: string; role: Role; inboxIds: string[] | null; lastSeenAt: string | null };

/**
 * The credentials epoch and, in the same statement, the row of the workspace the cached credential
 * reaches (nulls when it is deleted, or when nothing was cached): one read per request instead of
 * two for a route that shows the workspace, one round trip on Postgres. The columns are named, not
 * `*`: a prepared statement's result columns must not change when a migration adds one.
 */
const readEpochAndWorkspace = reusableQuery((db, workspaceId: string | null) =>
  db
    .selectFrom('credentials_epoch')
    .leftJoin('workspaces', (join) => join.on('workspaces.id', '=', workspaceId as string).on('workspaces.deleted_at', 'is', null))
    .select([
      'credentials_epoch.epoch',
      'workspaces.id',
      'workspaces.name',
      'workspaces.origin',
      'workspaces.retention_days',
      'workspaces.created_at',
      'workspaces.updated_at',
      'workspaces.deleted_at',
    ])
    .where('credentials_epoch.id', '=', 1),
);

type EpochRow = Awaited<ReturnType<typeof readEpochAndWorkspace>>[number];

/**
 * On SQLite, the epoch reads (by workspace asked for) made since the database last changed
 * (`sqliteChangeStamp`): while no connection of any process has changed a row, a read would answer
 * the same rows, so a request reads only the stamp (no statement). Postgres reads the epoch every time.
 */
interface KeptReads {
  stamp: string;
  rows: Map<string | null, EpochRow>;
}
const keptReads = new WeakMap<EpochCache<CachedCredential>, KeptReads>();
/** Workspaces whose row is kept per stamp; reads beyond that are made every time. */
const KEPT_READS = 1_000;

export interface EpochRead {
  cache: EpochCache<CachedCredential>;
  epoch: number;
  /** The live row of the workspace asked for, read with the epoch. */
  workspace: WorkspacesTable | undefined;
}

/**
 * Reads the credentials epoch (with the row of `workspaceId`, when given) and brings the cache in
 * step with it; the epoch is what entries read afterwards are stored under. Undefined (and nothing
 * cached) without a cache. At once on SQLite; a promise on Postgres.
 */
function cacheFor(ctx: C, workspaceId: string | null = null): MaybePromise<EpochRead | undefined> {
  if (!ctx.credentialCache) return undefined;
  const cache = ctx.credentialCache as EpochCache<CachedCredential>;
  const synced = ([row]: EpochRow[]): EpochRead => {
    const epoch = Number(row.epoch);
    cache.sync(epoch);
    return { cache, epoch, workspace: row.id === null ? undefined : (row as WorkspacesTable) };
  };
  // The stamp is taken before the read: a change committed in between makes the next one differ.
  const stamp = sqliteChangeStamp(ctx.db);
  let kept: KeptReads | undefined;
  if (stamp !== undefined) {
    kept = keptReads.get(cache);
    if (kept?.stamp !== stamp) {
      kept = { stamp, rows: new Map() };
      keptReads.set(cache, kept);
    }
    const row = kept.rows.get(workspaceId);
    if (row) return synced([row]);
  }
  const rows = readEpochAndWorkspace.now(ctx.db, workspaceId);
  if (!rows) return readEpochAndWorkspace(ctx.db, workspaceId).then(synced);
  if (kept && kept.rows.size < KEPT_READS) kept.rows.set(workspaceId, rows[0]);
  return synced(rows);
}

/** The workspace row read with the epoch, when it is the one the credential reaches. */
function workspaceRowFor(read: EpochRead | undefined, workspaceId: string): WorkspacesTable | undefined {
  return read?.workspace?.id === workspaceId ? read.workspace : undefined;
}

export const KEY_PREFIX = 'svc_sk_';
export const SESSION_TOKEN_PREFIX = 'svc_ses_';
/** A session ends this long after its last use. */
export const SESSION_IDLE_MS = 30 * DAY;
/** A session's last use (and expiry) is written at most this often. */
const SESSION_TOUCH_MS = 5 * MINUTE;
/** memberships.last_seen_at is written at most this often per member. */
export const SEEN_EVERY_MS = 5 * MINUTE;

export type Identity =
  | {
      kind: 'session';
      personId: string;
      email: string;
      sessionId: string;
      /** The credentials epoch read that found the session: resolveMembership in the same request uses it instead of reading again. */
      read?: EpochRead;
    }
  | { kind: 'api_key'; access: Access };

/**
 * The identity behind a bearer token (key or session), or undefined for an unknown, revoked or
 * expired one. `workspaceId` is the workspace a session's request names (resolveMembership's), so
 * that the one epoch read can bring its row.
 */
export function resolveCredential(ctx: C, token: string, workspaceId?: string): MaybePromise<Identity | undefined> {
  if (token.startsWith(KEY_PREFIX)) return andThen(authenticateApiKey(ctx, token), (access) => access && { kind: 'api_key', access });
  if (token.startsWith(SESSION_TOKEN_PREFIX)) {
    return andThen(
      findSession(ctx, token, workspaceId),
      (s) => s && { kind: 'session', personId: s.person_id, email: s.email, sessionId: s.session_id, read: s.read },
    );
  }
  return undefined;
}

/**
 * The access a secret grants, or undefined for unknown, revoked, expired keys and deleted workspaces.
 * A cached key on SQLite is answered at once (no promise); the rest is awaited.
 */
export function authenticateApiKey(ctx: C, secret: string): MaybePromise<Access | undefined> {
  if (!secret.startsWith(KEY_PREFIX)) return undefined;
  const hash = sha256Hex(secret);
  const cacheKey = `key:${hash}`;
  // The workspace of the key as cached before the epoch read: its row comes with the epoch, and is
  // used only if the key is still cached once the cache is in step with the epoch.
  const peeked = ctx.credentialCache?.get(cacheKey) as CachedCredential | undefined;
  return andThen(cacheFor(ctx, peeked?.kind === 'api_key' ? peeked.workspaceId : null), (read) => {
    const key = read?.cache.get(cacheKey);
    if (key?.kind === 'api_key') return keyInUse(ctx, key, workspaceRowFor(read, key.workspaceId));
    return readApiKey(ctx, hash).then((row) => {
      if (!row) return undefined;
      read?.cache.set(read.epoch, cacheKey, row);
      return keyInUse(ctx, row, undefined);
    });
  });
}

async function readApiKey(ctx: C, hash: string): Promise<CachedKey | undefined> {
  const row = await ctx.db
    .selectFrom('api_keys')
    .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .select(['api_keys.id', 'api_keys.workspace_id', 'api_keys.scopes', 'api_keys.inbox_ids', 'api_keys.expires_at', 'api_keys.last_used_at'])
    .where('api_keys.secret_hash', '=', hash)
    .where('api_keys.revoked_at', 'is', null)
    .where('workspaces.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    kind: 'api_key',
    keyId: row.id,
    workspaceId: row.workspace_id,
    scopes: new Set(JSON.parse(row.scopes) as Scope[]),
    inboxIds: row.inbox_ids ? (JSON.parse(row.inbox_ids) as string[]) : null,
    expiresMs: row.expires_at ? Date.parse(row.expires_at) : null,
    lastUsedMs: row.last_used_at ? Date.parse(row.last_used_at) : null,
  };
}

/** A live key's access, unless it has expired; notes its use (written at most every minute). */
function keyInUse(ctx: C, key: CachedKey, workspaceRow: WorkspacesTable | undefined): MaybePromise<Access | undefined> {
  const nowMs = ctx.clock.now().getTime();
  if (key.expiresMs !== null && key.expiresMs <= nowMs) return undefined;
  // A copy of the inbox list: an Access is the request's own (the scope set is read-only).
  const access = keyAccess(key.workspaceId, key.keyId, key.scopes, key.inboxIds && [...key.inboxIds]);
  if (workspaceRow) access.workspaceRow = workspaceRow;
  // last_used_at is kept to the minute so that a busy key does not turn every request into a write.
  if (key.lastUsedMs !== null && nowMs - key.lastUsedMs < MINUTE) return access;
  key.lastUsedMs = nowMs;
  return ctx.db
    .updateTable('api_keys')
    .set({ last_used_at: iso(nowMs) })
    .where('id', '=', key.keyId)
    .execute()
    .then(() => access);
}

const membershipKey = (personId: string, workspaceId: string | undefined) => `membership:${personId}:${workspaceId ?? ''}`;

/** What findSession hands on: the session, and the credentials epoch read it was judged under. */
export interface FoundSession {
  session_id: string;
  person_id: string;
  email: string;
  read: EpochRead | undefined;
}

type CachedSession = Extract<CachedCredential, { kind: 'session' }>;
type CachedMembership = Extract<CachedCredential, { kind: 'membership' }>;

/**
 * The live session of a token, sliding its expiry forward (written at most every 5 minutes), with
 * the epoch read it was judged under. When the session and its membership of `workspaceId` (or the
 * one implied) were cached, that read brings the workspace's row as for a key. A cached session on
 * SQLite is answered at once (no promise), as a key is.
 */
export function findSession(ctx: C, token: string, workspaceId?: string): MaybePromise<FoundSession | undefined> {
  const now = ctx.clock.now();
  const hash = sha256Hex(token);
  const cacheKey = `session:${hash}`;
  const peekedSession = ctx.credentialCache?.get(cacheKey) as CachedCredential | undefined;
  const peekedMembership =
    peekedSession?.kind === 'session'
      ? (ctx.credentialCache?.get(membershipKey(peekedSession.personId, workspaceId)) as CachedCredential | undefined)
      : undefined;
  return andThen(cacheFor(ctx, peekedMembership?.kind === 'membership' ? peekedMembership.workspaceId : null), (cached) => {
    const session = cached?.cache.get(cacheKey);
    // A cached expiry may be older than the row's (another process slid it forward): read the row again.
    if (session?.kind === 'session' && Date.parse(session.expiresAt) > now.getTime()) return sessionInUse(ctx, session, now, cached);
    return readSession(ctx, hash, now).then((read) => {
      if (!read) {
        cached?.cache.delete(cacheKey);
        return undefined;
      }
      cached?.cache.set(cached.epoch, cacheKey, read);
      return sessionInUse(ctx, read, now, cached);
    });
  });
}

async function readSession(ctx: C, hash: string, now: Date): Promise<CachedSession | undefined> {
  const row = await ctx.db
    .selectFrom('sessions')
    .innerJoin('people', 'people.id', 'sessions.person_id')
    .select(['sessions.id as session_id', 'sessions.last_used_at', 'sessions.expires_at', 'people.id as person_id', 'people.email'])
    .where('sessions.token_hash', '=', hash)
    .where('sessions.expires_at', '>', iso(now))
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    kind: 'session',
    sessionId: row.session_id,
    personId: row.person_id,
    email: row.email,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  };
}

/** A live session as found; notes its use and slides its expiry (written at most every SESSION_TOUCH_MS). */
function sessionInUse(ctx: C, session: CachedSession, now: Date, read: EpochRead | undefined): MaybePromise<FoundSession> {
  const found = () => ({ session_id: session.sessionId, person_id: session.personId, email: session.email, read });
  if (now.getTime() - Date.parse(session.lastUsedAt) <= SESSION_TOUCH_MS) return found();
  session.lastUsedAt = iso(now);
  session.expiresAt = iso(now.getTime() + SESSION_IDLE_MS);
  return ctx.db
    .updateTable('sessions')
    .set({ last_used_at: session.lastUsedAt, expires_at: session.expiresAt })
    .where('id', '=', session.sessionId)
    .execute()
    .then(found);
}

/**
 * A signed-in person's access to one of their workspaces (of a live workspace): the one named, or
 * their only one when none is named. 403 when they are not a member, 400 when they belong to several
 * and named none. Notes the member as seen (written at most every 5 minutes). At once for a cached
 * membership on SQLite.
 */
export function resolveMembership(
  ctx: C,
  person: { personId: string; sessionId: string; read?: EpochRead },
  workspaceId: string | undefined,
): MaybePromise<Access> {
  const cacheKey = membershipKey(person.personId, workspaceId);
  const peeked = ctx.credentialCache?.get(cacheKey) as CachedCredential | undefined;
  // The session was found under an epoch read of this request: the cache is in step with it.
  const epochRead = person.read ?? cacheFor(ctx, peeked?.kind === 'membership' ? peeked.workspaceId : null);
  return andThen(epochRead, (cached) => {
    const m = cached?.cache.get(cacheKey);
    if (m?.kind === 'membership') return membershipInUse(ctx, person, m, workspaceRowFor(cached, m.workspaceId));
    return readMembership(ctx, person.personId, workspaceId).then((read) => {
      cached?.cache.set(cached.epoch, cacheKey, read);
      return membershipInUse(ctx, person, read, undefined);
    });
  });
}

async function readMembership(ctx: C, personId: string, workspaceId: string | undefined): Promise<CachedMembership> {
  let q = ctx.db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
    .select(['memberships.id', 'memberships.workspace_id', 'memberships.role', 'memberships.inbox_ids', 'memberships.last_seen_at'])
    .where('memberships.person_id', '=', personId)
    .where('workspaces.deleted_at', 'is', null);
  if (workspaceId) q = q.where('memberships.workspace_id', '=', workspaceId);
  const rows = await q.limit(2).execute();
  if (rows.length === 0) throw forbidden(workspaceId ? 'you are not a member of that workspace' : 'you are not a member of any workspace');
  if (rows.length > 1) throw invalid('you belong to several workspaces; name one in the Svc-Workspace header');
  const row = rows[0];
  return {
    kind: 'membership',
    membershipId: row.id,
    workspaceId: row.workspace_id,
    role: row.role as Role,
    inboxIds: row.inbox_ids ? (JSON.parse(row.inbox_ids) as string[]) : null,
    lastSeenAt: row.last_seen_at,
  };
}

/** A membership's access for this request; notes the member as seen when the last note is older than SEEN_EVERY_MS. */
function membershipInUse(
  ctx: C,
  person: { personId: string; sessionId: string },
  m: CachedMembership,
  workspaceRow: WorkspacesTable | undefined,
): MaybePromise<Access> {
  const access = memberAccess(m.workspaceId, person.personId, m.role, person.sessionId, m.inboxIds && [...m.inboxIds]);
  if (workspaceRow) access.workspaceRow = workspaceRow;
  const lastSeenAt = m.lastSeenAt;
  if (lastSeenAt && ctx.clock.now().getTime() - Date.parse(lastSeenAt) < SEEN_EVERY_MS) return access;
  m.lastSeenAt = iso(ctx.clock.now());
  return noteMemberSeen(ctx, m.membershipId, lastSeenAt).then(() => access);
}

/** Records that a member used the workspace (cheap when recent: written at most every SEEN_EVERY_MS). */
export async function noteMemberSeen(ctx: C, membershipId: string, lastSeenAt: string | null): Promise<void> {
  const now = ctx.clock.now();
  if (lastSeenAt && now.getTime() - Date.parse(lastSeenAt) < SEEN_EVERY_MS) return;
  await ctx.db
    .updateTable('memberships')
    .set({ last_seen_at: iso(now) })
    .where('id', '=', membershipId)
    .execute();
}

/**
 * Whether the credentials behind an Access still hold: the workspace is live and the key is, or the
 * session and the membership are, with the same role and inbox limit. A long-lived connection asks
 * this on every heartbeat, so changes made by another process are noticed too.
 */
export async function accessStillValid(ctx: C, access: Access): Promise<boolean> {
  const now = iso(ctx.clock.now());
  const live =
    (await ctx.db.selectFrom('workspaces').select('id').where('id', '=', access.workspaceId).where('deleted_at', 'is', null).executeTakeFirst()) !== undefined;
  if (!live) return false;
  if (access.actor.kind === 'api_key') {
    const key = await ctx.db.selectFrom('api_keys').select(['revoked_at', 'expires_at']).where('id', '=', access.actor.keyId).executeTakeFirst();
    return Boolean(key && !key.revoked_at && (!key.expires_at || key.expires_at > now));
  }
  const session = await ctx.db
    .selectFrom('sessions')
    .innerJoin('memberships', 'memberships.person_id', 'sessions.person_id')
    .select(['memberships.role', 'memberships.inbox_ids'])
    .where('sessions.id', '=', access.actor.sessionId)
    .where('sessions.expires_at', '>', now)
    .where('memberships.workspace_id', '=', access.workspaceId)
    .executeTakeFirst();
  // A changed role or inbox limit (by another process) ends the connection too; the client reconnects.
  if (!session || session.role !== access.actor.role) return false;
  const limit = session.role === 'agent' && session.inbox_ids ? (JSON.parse(session.inbox_ids) as string[]) : null;
  return JSON.stringify(limit) === JSON.stringify(access.inboxIds);
}

/**
 * The access a key (by id) or a member (by person id) has in a workspace now, for something done
 * later in their name (a migration's credentials link): undefined when the key is revoked or expired,
 * the person is no longer a member, or the workspace is deleted. `label` stands for the session.
 */
export async function currentAccessOf(
  ctx: C,
  workspaceId: string,
  actor: { type: 'api_key' | 'member'; id: string },
  label: string,
): Promise<Access | undefined> {
  if (actor.type === 'api_key') {
    const key = await ctx.db
      .selectFrom('api_keys')
      .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
      .select(['api_keys.id', 'api_keys.workspace_id', 'api_keys.scopes', 'api_keys.inbox_ids', 'api_keys.expires_at', 'api_keys.revoked_at'])
      .where('api_keys.id', '=', actor.id)
      .where('api_keys.workspace_id', '=', workspaceId)
      .where('workspaces.deleted_at', 'is', null)
      .executeTakeFirst();
    if (!key || key.revoked_at || (key.expires_at && Date.parse(key.expires_at) <= ctx.clock.now().getTime())) return undefined;
    return keyAccess(key.workspace_id, key.id, JSON.parse(key.scopes) as Scope[], key.inbox_ids ? (JSON.parse(key.inbox_ids) as string[]) : null);
  }
  const m = await ctx.db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
    .select(['memberships.role', 'memberships.inbox_ids'])
    .where('memberships.workspace_id', '=', workspaceId)
    .where('memberships.person_id', '=', actor.id)
    .where('workspaces.deleted_at', 'is', null)
    .executeTakeFirst();
  return m && memberAccess(workspaceId, actor.id, m.role as Role, label, m.inbox_ids ? (JSON.parse(m.inbox_ids) as string[]) : null);
}
