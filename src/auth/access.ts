// Who may do what. Every route asks these helpers; nothing else decides about scopes or inboxes.
import type { Role } from '../db/schema.js';
import { forbidden, notFound } from '../platform/errors.js';

export const SCOPES = [
  'conversations:read',
  'conversations:write',
  'contacts:read',
  'contacts:write',
  'webhooks:manage',
  'broadcasts:manage',
  'migrations:manage',
  'workspace:manage',
] as const;
export type Scope = (typeof SCOPES)[number];

const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: SCOPES,
  // Admins manage everything but the workspace itself (retention, deletion are the owner's).
  admin: SCOPES.filter((s) => s !== 'workspace:manage'),
  // Agents answer conversations; they never get webhooks, broadcasts, migrations or workspace settings.
  agent: ['conversations:read', 'conversations:write', 'contacts:read', 'contacts:write'],
};

export type Actor =
  | { kind: 'member'; personId: string; role: Role; sessionId: string }
  | { kind: 'api_key'; keyId: string };

/** A caller's reach into one workspace. */
export interface Access {
  workspaceId: string;
  actor: Actor;
  scopes: ReadonlySet<Scope>;
  /** null: every inbox of the workspace; otherwise only these. */
  inboxIds: readonly string[] | null;
}

export function memberAccess(workspaceId: string, personId: string, role: Role, sessionId: string): Access {
  return { workspaceId, actor: { kind: 'member', personId, role, sessionId }, scopes: new Set(ROLE_SCOPES[role]), inboxIds: null };
}

export function keyAccess(workspaceId: string, keyId: string, scopes: Scope[], inboxIds: string[] | null): Access {
  return { workspaceId, actor: { kind: 'api_key', keyId }, scopes: new Set(scopes), inboxIds };
}

export function requireScope(access: Access, scope: Scope): void {
  if (!access.scopes.has(scope)) throw forbidden(`this credential lacks the scope ${scope}`);
}

export function requireRole(access: Access, roles: Role[], what: string): void {
  if (access.actor.kind !== 'member' || !roles.includes(access.actor.role)) throw forbidden(`${what} is allowed to ${roles.join(' and ')}s only`);
}

/** Owners/admins, or a key with the scope (and, when `wholeWorkspace`, no inbox limit). */
export function requireManager(access: Access, scope: Scope, opts: { wholeWorkspace?: boolean } = {}): void {
  if (access.actor.kind === 'member') {
    if (access.actor.role !== 'owner' && access.actor.role !== 'admin') throw forbidden('allowed to owners and admins only');
    return;
  }
  requireScope(access, scope);
  if (opts.wholeWorkspace && access.inboxIds !== null) throw forbidden('not allowed to keys limited to some inboxes');
}

export function canSeeInbox(access: Access, inboxId: string | null): boolean {
  return access.inboxIds === null || (inboxId !== null && access.inboxIds.includes(inboxId));
}

/** Throws not_found (not forbidden, so ids outside the caller's reach stay secret). */
export function requireInbox(access: Access, inboxId: string, what = 'inbox'): void {
  if (!canSeeInbox(access, inboxId)) throw notFound(what);
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
