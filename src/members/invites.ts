// Invites: a one-time link (valid 7 days) that lets an e-mail address join a workspace with a role.
// The token is shown once (in the answer that made or re-sent the invite) and stored hashed.
import { type Access, authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { InvitesTable, Role } from '../db/schema.js';
import { createSession, findOrCreatePerson, findPersonByEmail, findPersonById, normalizeEmail, type PersonRow } from '../people/service.js';
import { DAY, iso } from '../platform/clock.js';
import { randomToken, sha256Hex } from '../platform/crypto.js';
import { AppError, conflict, forbidden, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { findLiveWorkspace, findWorkspace } from '../workspaces/store.js';
import { checkInboxLimit } from './service.js';
import { addMember } from './store.js';

export type InviteRow = InvitesTable;

export const INVITE_TTL_MS = 7 * DAY;
export const INVITE_TOKEN_PREFIX = 'svc_inv_';
/** Where the panel takes an invite; the token is in the fragment, so it never reaches server logs. */
export const INVITE_PATH = '/invite#';

export function inviteUrl(publicUrl: string, token: string): string {
  return `${publicUrl}${INVITE_PATH}${token}`;
}

export function inviteStatus(invite: InviteRow, now: Date): 'pending' | 'expired' | 'accepted' | 'revoked' {
  if (invite.accepted_at) return 'accepted';
  if (invite.revoked_at) return 'revoked';
  return Date.parse(invite.expires_at) <= now.getTime() ? 'expired' : 'pending';
}

export function formatInvite(invite: InviteRow, now: Date) {
  return {
    id: invite.id,
    email: invite.email,
    role: invite.role,
    inbox_ids: invite.inbox_ids ? (JSON.parse(invite.inbox_ids) as string[]) : null,
    status: inviteStatus(invite, now),
    invited_by: invite.invited_by,
    created_at: invite.created_at,
    sent_at: invite.sent_at,
    expires_at: invite.expires_at,
  };
}

const gone = (code: string, message: string) => new AppError(410, code, message);

function requireMayGrant(access: Access, role: Role) {
  authorize(access, 'members:manage');
  if (role === 'owner' && (access.actor.kind !== 'member' || access.actor.role !== 'owner')) throw forbidden('only an owner invites an owner');
}

async function mailInvite(ctx: Ctx, invite: InviteRow, url: string): Promise<boolean> {
  const ws = await findWorkspace(ctx.db, invite.workspace_id);
  if (!ws) throw notFound('workspace');
  const inviter = invite.invited_by ? await findPersonById(ctx, invite.invited_by) : undefined;
  const by = inviter ? `${inviter.name ? `${inviter.name} (${inviter.email})` : inviter.email} invited you` : 'You are invited';
  const sent = await ctx.systemMail.send(
    {
      to: invite.email,
      subject: `Join ${ws.name}`,
      text:
        `${by} to join the workspace "${ws.name}" as ${invite.role === 'agent' ? 'an agent' : `an ${invite.role}`}.\n\n` +
        `Accept here:\n${url}\n\n` +
        `The link works once, until ${invite.expires_at} (UTC). If you did not expect it, ignore this mail.\n`,
    },
    'invite',
  );
  if (sent)
    await ctx.db
      .updateTable('invites')
      .set({ sent_at: iso(ctx.clock.now()) })
      .where('id', '=', invite.id)
      .execute();
  return sent;
}

/**
 * Makes an invite and mails the link from the server's own account. The answer carries the link
 * every time (the one moment it can be shown, like an API key's secret), so an admin can pass it on
 * by hand, which is the only way when the mail was not sent (`mail_sent: false`).
 */
export async function createInvite(ctx: Ctx, access: Access, input: { email: string; role: Role; inboxIds?: string[] | null }) {
  requireMayGrant(access, input.role);
  const email = normalizeEmail(input.email);
  const now = ctx.clock.now();
  const token = INVITE_TOKEN_PREFIX + randomToken(32);
  const invite = await ctx.db.transaction().execute(async (trx) => {
    const person = await findPersonByEmail({ db: trx }, email);
    const member = person
      ? await trx.selectFrom('memberships').select('id').where('workspace_id', '=', access.workspaceId).where('person_id', '=', person.id).executeTakeFirst()
      : undefined;
    if (member) throw conflict(`${email} is a member of this workspace already`, 'already_member', { member_id: member.id });
    const pending = await trx
      .selectFrom('invites')
      .select('id')
      .where('workspace_id', '=', access.workspaceId)
      .where('email', '=', email)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', iso(now))
      .executeTakeFirst();
    if (pending) throw conflict(`${email} has a pending invite; resend or revoke it`, 'invite_pending', { invite_id: pending.id });
    const row: InviteRow = {
      id: newId('inv'),
      workspace_id: access.workspaceId,
      email,
      role: input.role,
      inbox_ids: await checkInboxLimit(trx, access.workspaceId, input.role, input.inboxIds),
      token_hash: sha256Hex(token),
      invited_by: access.actor.kind === 'member' ? access.actor.personId : null,
      created_at: iso(now),
      sent_at: null,
      expires_at: iso(now.getTime() + INVITE_TTL_MS),
      accepted_at: null,
      accepted_by: null,
      revoked_at: null,
    };
    await trx.insertInto('invites').values(row).execute();
    return row;
  });
  const url = inviteUrl(ctx.config.publicUrl, token);
  const mailSent = await mailInvite(ctx, invite, url);
  ctx.log.info('invite created', { workspace_id: access.workspaceId, invite_id: invite.id, role: invite.role, mail_sent: mailSent });
  return { invite: { ...invite, sent_at: mailSent ? iso(ctx.clock.now()) : null }, url, mailSent };
}

async function findInvite(ctx: Pick<Ctx, 'db'>, workspaceId: string, id: string): Promise<InviteRow> {
  const row = await ctx.db.selectFrom('invites').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('invite');
  return row;
}

/** Invites not accepted or revoked (expired ones too, so they can be re-sent), newest first; never tokens. */
export async function listInvites(ctx: Pick<Ctx, 'db'>, access: Access): Promise<InviteRow[]> {
  authorize(access, 'members:manage');
  return ctx.db
    .selectFrom('invites')
    .selectAll()
    .where('workspace_id', '=', access.workspaceId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .orderBy('id', 'desc')
    .execute();
}

/** Revokes an invite; its link stops working. Revoking twice is fine; an accepted invite is 409. */
export async function revokeInvite(ctx: Ctx, access: Access, id: string): Promise<InviteRow> {
  authorize(access, 'members:manage');
  const invite = await findInvite(ctx, access.workspaceId, id);
  requireMayGrant(access, invite.role);
  if (invite.accepted_at) throw conflict('the invite was accepted already; remove the member instead', 'invite_accepted');
  if (invite.revoked_at) return invite;
  const revokedAt = iso(ctx.clock.now());
  await ctx.db.updateTable('invites').set({ revoked_at: revokedAt }).where('id', '=', id).where('accepted_at', 'is', null).execute();
  ctx.log.info('invite revoked', { workspace_id: access.workspaceId, invite_id: id });
  return { ...invite, revoked_at: revokedAt };
}

/** Mails a pending or expired invite again with a new link (the old one stops working), valid 7 more days. */
export async function resendInvite(ctx: Ctx, access: Access, id: string) {
  authorize(access, 'members:manage');
  const invite = await findInvite(ctx, access.workspaceId, id);
  requireMayGrant(access, invite.role);
  if (invite.accepted_at) throw conflict('the invite was accepted already', 'invite_accepted');
  if (invite.revoked_at) throw gone('invite_revoked', 'the invite was revoked; make a new one');
  const now = ctx.clock.now();
  const token = INVITE_TOKEN_PREFIX + randomToken(32);
  const renewed: InviteRow = { ...invite, token_hash: sha256Hex(token), expires_at: iso(now.getTime() + INVITE_TTL_MS) };
  const r = await ctx.db
    .updateTable('invites')
    .set({ token_hash: renewed.token_hash, expires_at: renewed.expires_at })
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw conflict('the invite changed meanwhile; reload it');
  const url = inviteUrl(ctx.config.publicUrl, token);
  const mailSent = await mailInvite(ctx, renewed, url);
  ctx.log.info('invite re-sent', { workspace_id: access.workspaceId, invite_id: id, mail_sent: mailSent });
  return { invite: { ...renewed, sent_at: mailSent ? iso(ctx.clock.now()) : invite.sent_at }, url, mailSent };
}

export interface AcceptResult {
  workspace: { id: string; name: string };
  memberId: string;
  role: Role;
  person: PersonRow;
  /** A new session, when the invite made the account (a person who had one was signed in already). */
  session?: { token: string; expiresAt: string };
}

/**
 * Accepts an invite. A new address gets an account and a session (whatever SVC_SIGNUP says); a
 * person with an account must be signed in as that person (401 sign_in_required otherwise), so a
 * link passed on by hand can never open an existing account. Single use; expired and revoked
 * invites are refused with 410.
 */
/** What an invite link offers, before it is accepted: the workspace, the role and the address it is for. */
export async function inviteSummary(ctx: Pick<Ctx, 'db' | 'clock'>, token: string) {
  const invite = token.startsWith(INVITE_TOKEN_PREFIX)
    ? await ctx.db.selectFrom('invites').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirst()
    : undefined;
  if (!invite) throw notFound('invite (the link is wrong or was replaced by a newer one)');
  const ws = await findLiveWorkspace(ctx.db, invite.workspace_id);
  if (!ws) throw gone('invite_revoked', 'the workspace of this invite was deleted');
  const status = inviteStatus(invite, ctx.clock.now());
  if (status === 'accepted') throw gone('invite_used', 'this invite was used already');
  if (status === 'revoked') throw gone('invite_revoked', 'this invite was revoked; ask for a new one');
  if (status === 'expired') throw gone('invite_expired', 'this invite has expired; ask for it to be sent again');
  return { workspace_name: ws.name, role: invite.role, email: invite.email };
}

export async function acceptInvite(
  ctx: Ctx,
  input: { token: string; signedIn?: { personId: string; email: string }; name?: string; locale?: string; userAgent?: string },
): Promise<AcceptResult> {
  const now = ctx.clock.now();
  const result = await ctx.db.transaction().execute(async (trx) => {
    const invite = input.token.startsWith(INVITE_TOKEN_PREFIX)
      ? await trx.selectFrom('invites').selectAll().where('token_hash', '=', sha256Hex(input.token)).executeTakeFirst()
      : undefined;
    if (!invite) throw notFound('invite (the link is wrong or was replaced by a newer one)');
    const ws = await findLiveWorkspace(trx, invite.workspace_id);
    if (!ws) throw gone('invite_revoked', 'the workspace of this invite was deleted');
    const status = inviteStatus(invite, now);
    if (status === 'accepted') throw gone('invite_used', 'this invite was used already');
    if (status === 'revoked') throw gone('invite_revoked', 'this invite was revoked; ask for a new one');
    if (status === 'expired') throw gone('invite_expired', 'this invite has expired; ask for it to be sent again');
    const existing = await findPersonByEmail({ db: trx }, invite.email);
    if (input.signedIn && input.signedIn.email !== invite.email) {
      throw conflict(
        `this invite is for ${invite.email}, but you are signed in as ${input.signedIn.email}; sign out first, or ask for an invite to your address`,
        'invite_for_someone_else',
      );
    }
    if (existing && !input.signedIn) {
      throw new AppError(401, 'sign_in_required', `${invite.email} has an account already: sign in as that person, then accept the invite`, {
        email: invite.email,
      });
    }
    const member = existing
      ? await trx.selectFrom('memberships').select('id').where('workspace_id', '=', ws.id).where('person_id', '=', existing.id).executeTakeFirst()
      : undefined;
    if (member) throw conflict(`${invite.email} is a member of this workspace already`, 'already_member', { member_id: member.id });
    const used = await trx
      .updateTable('invites')
      .set({ accepted_at: iso(now) })
      .where('id', '=', invite.id)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) throw gone('invite_used', 'this invite was used already');
    const tx = { db: trx, clock: ctx.clock };
    const person = existing ?? (await findOrCreatePerson(tx, { email: invite.email, name: input.name?.trim() || undefined, locale: input.locale }));
    await trx.updateTable('invites').set({ accepted_by: person.id }).where('id', '=', invite.id).execute();
    await addMember(tx, ws.id, person.id, invite.role);
    const m = await trx.selectFrom('memberships').select('id').where('workspace_id', '=', ws.id).where('person_id', '=', person.id).executeTakeFirstOrThrow();
    if (invite.inbox_ids) await trx.updateTable('memberships').set({ inbox_ids: invite.inbox_ids }).where('id', '=', m.id).execute();
    const session = existing ? undefined : await createSession(tx, person.id, { userAgent: input.userAgent });
    return { workspace: ws, memberId: m.id, role: invite.role, person, session, inviteId: invite.id };
  });
  ctx.log.info('invite accepted', {
    workspace_id: result.workspace.id,
    invite_id: result.inviteId,
    member_id: result.memberId,
    new_account: Boolean(result.session),
  });
  const { inviteId: _, ...out } = result;
  return out;
}
