// Who may do what: the permission matrix. Every route names the permission it needs (`authorize`)
// or the key scope (`requireScope`); nothing else decides about roles, scopes or inboxes.
// README.md ("Members, roles and invites") shows the same matrix to users.
import type { Role, WorkspacesTable } from '../db/schema.js';
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
  'analytics:read',
  'analytics:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLES: readonly Role[] = ['owner', 'admin', 'agent'];

interface Rule {
  /** Member roles allowed. */
  roles: readonly Role[];
  /** The scope an API key needs; null: keys may never do it. */
  scope: Scope | null;
  /** Refused to keys limited to some inboxes (the action reaches the whole workspace). */
  wholeWorkspace?: boolean;
  /** How a refusal names the action. */
  what: string;
}

const EVERYONE: readonly Role[] = ROLES;
const MANAGERS: readonly Role[] = ['owner', 'admin'];
const OWNERS: readonly Role[] = ['owner'];

/**
 * The matrix. Agents read and answer conversations, assign, label and manage contacts; managing
 * members, invites, API keys, webhooks, inboxes and channels, broadcasts and migrations is for
 * owners and admins; workspace settings, deletion and broadcast approval requests for owners.
 */
export const PERMISSIONS = {
  'conversations:read': { roles: EVERYONE, scope: 'conversations:read', what: 'reading conversations' },
  'conversations:write': { roles: EVERYONE, scope: 'conversations:write', what: 'answering and changing conversations' },
  'contacts:read': { roles: EVERYONE, scope: 'contacts:read', what: 'reading contacts' },
  'contacts:write': { roles: EVERYONE, scope: 'contacts:write', what: 'changing contacts' },
  /** The member list (to assign conversations and write for a member). */
  'members:read': { roles: EVERYONE, scope: 'conversations:read', what: 'listing members' },
  'members:manage': { roles: MANAGERS, scope: null, what: 'managing members and invites' },
  /** Teams: every member reads them (to assign and to see their views); owners and admins manage them. */
  'teams:read': { roles: EVERYONE, scope: 'conversations:read', what: 'listing teams' },
  'teams:manage': { roles: MANAGERS, scope: 'workspace:manage', what: 'managing teams' },
  /** Custom fields (issue 37): every member reads the definitions (to show and edit values); owners and admins manage them. */
  'custom_fields:read': { roles: EVERYONE, scope: 'conversations:read', what: 'listing custom fields' },
  'custom_fields:manage': { roles: MANAGERS, scope: 'workspace:manage', what: 'managing custom fields' },
  /** Automation rules and their run log (issue 36); macros are run by every member. */
  'automation:manage': { roles: MANAGERS, scope: 'workspace:manage', what: 'managing automation rules' },
  /** Saved views: every member keeps personal ones; shared ones (the whole workspace sees them) are for owners and admins. */
  'views:manage_shared': { roles: MANAGERS, scope: 'workspace:manage', what: 'managing shared views' },
  'api_keys:manage': { roles: MANAGERS, scope: null, what: 'managing API keys' },
  'webhooks:manage': { roles: MANAGERS, scope: 'webhooks:manage', what: 'managing webhooks' },
  'inboxes:manage': { roles: MANAGERS, scope: 'workspace:manage', what: 'managing inboxes and channels' },
  'broadcasts:manage': { roles: MANAGERS, scope: 'broadcasts:manage', what: 'managing broadcasts' },
  'broadcasts:request_approval': { roles: OWNERS, scope: null, what: 'asking for broadcast approval' },
  'migrations:manage': { roles: MANAGERS, scope: 'migrations:manage', wholeWorkspace: true, what: 'moving a mailbox' },
  /** Reports of the inboxes the caller reaches (agents see their inboxes' figures). */
  'reports:read': { roles: EVERYONE, scope: 'conversations:read', what: 'reading reports' },
  'usage:read': { roles: MANAGERS, scope: 'workspace:manage', wholeWorkspace: true, what: 'reading the workspace’s usage' },
  /** Web analytics: every member reads the figures; owners and admins manage the properties. */
  'analytics:read': { roles: EVERYONE, scope: 'analytics:read', what: 'reading web analytics' },
  'analytics:manage': { roles: MANAGERS, scope: 'workspace:manage', what: 'managing analytics properties' },
  /** Server-side events (POST /v1/analytics/events), e.g. a purchase confirmed by the shop's backend. */
  'analytics:write': { roles: EVERYONE, scope: 'analytics:write', what: 'sending web analytics events' },
  /** Retention deletes data: the spec's "owner only", like deleting the workspace (no key, whatever its scopes). */
  'workspace:manage': { roles: OWNERS, scope: null, what: 'changing workspace settings' },
  'workspace:delete': { roles: OWNERS, scope: null, what: 'deleting the workspace' },
} as const satisfies Record<string, Rule>;
export type Permission = keyof typeof PERMISSIONS;

/**
 * What a member's role grants where a route asks for a key scope (`requireScope`), consistent with
 * the matrix: admins lack workspace:manage because for keys it also covers workspace settings
 * (owners only); routes about inboxes and channels ask `authorize(access, 'inboxes:manage')`.
 */
const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: SCOPES,
  admin: SCOPES.filter((s) => s !== 'workspace:manage'),
  agent: ['conversations:read', 'conversations:write', 'contacts:read', 'contacts:write'],
};

export type Actor = { kind: 'member'; personId: string; role: Role; sessionId: string } | { kind: 'api_key'; keyId: string };

/** A caller's reach into one workspace. */
export interface Access {
  workspaceId: string;
  actor: Actor;
  scopes: ReadonlySet<Scope>;
  /** null: every inbox of the workspace; otherwise only these (a key's or an agent's limit). */
  inboxIds: readonly string[] | null;
  /**
   * The workspace's row as the request found it, when the credential came from the cache: read in
   * the same statement as the credentials epoch (src/auth/credentials.ts), so a route that shows the
   * workspace needs no read of its own. Undefined otherwise; never a deleted workspace's.
   */
  workspaceRow?: WorkspacesTable;
}

/** A member's access; an inbox limit applies to agents only (owners and admins manage every inbox). */
export function memberAccess(workspaceId: string, personId: string, role: Role, sessionId: string, inboxIds: readonly string[] | null = null): Access {
  return {
    workspaceId,
    actor: { kind: 'member', personId, role, sessionId },
    scopes: new Set(ROLE_SCOPES[role]),
    inboxIds: role === 'agent' ? inboxIds : null,
  };
}

/** A key's access; a set of scopes is shared as it is (it is read-only), a list is made into one. */
export function keyAccess(workspaceId: string, keyId: string, scopes: readonly Scope[] | ReadonlySet<Scope>, inboxIds: string[] | null): Access {
  return { workspaceId, actor: { kind: 'api_key', keyId }, scopes: scopes instanceof Set ? scopes : new Set(scopes), inboxIds };
}

/** Whether the caller may do it (see PERMISSIONS). */
export function isAllowed(access: Access, permission: Permission): boolean {
  const rule: Rule = PERMISSIONS[permission];
  if (access.actor.kind === 'member') return rule.roles.includes(access.actor.role);
  if (rule.scope === null || !access.scopes.has(rule.scope)) return false;
  return !(rule.wholeWorkspace && access.inboxIds !== null);
}

/** 403 unless the caller may do it, with a message that says who may. */
export function authorize(access: Access, permission: Permission): void {
  if (isAllowed(access, permission)) return;
  const rule: Rule = PERMISSIONS[permission];
  const roles = rule.roles.length === 1 ? `${rule.roles[0]}s` : `${rule.roles.slice(0, -1).join(', ')} and ${rule.roles.at(-1)}s`;
  if (access.actor.kind === 'member') throw forbidden(`${rule.what} is allowed to ${roles} only`);
  if (rule.scope === null) throw forbidden(`${rule.what} is allowed to ${roles} only, not to API keys`);
  if (!access.scopes.has(rule.scope)) throw forbidden(`this credential lacks the scope ${rule.scope}`);
  throw forbidden(`${rule.what} is not allowed to keys limited to some inboxes`);
}

export function requireScope(access: Access, scope: Scope): void {
  if (!access.scopes.has(scope)) throw forbidden(`this credential lacks the scope ${scope}`);
}

/** Owners/admins, or a key with the scope (and, when `wholeWorkspace`, no inbox limit). Prefer `authorize` with a named permission. */
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
