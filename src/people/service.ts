import { randomInt } from 'node:crypto';
import { SESSION_IDLE_MS, SESSION_TOKEN_PREFIX } from '../auth/credentials.js';
import { ACCESS_REVOKED, type AccessRevoked } from '../auth/revocation.js';
import type { Ctx } from '../context.js';
import { forgetPersonInConversations } from '../conversations/store.js';
import type { Db, PeopleTable, Role } from '../db/schema.js';
import { HOUR, iso, MINUTE } from '../platform/clock.js';
import { randomToken, safeEqual, sha256Hex } from '../platform/crypto.js';
import { conflict, invalid, notFound, unauthorized } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { enqueue, type JobKind } from '../platform/jobs.js';
import { RateLimiter } from '../platform/rate-limit.js';
import { charCount } from '../platform/text.js';
import { normalizeEmail } from './email.js';

export type PersonRow = PeopleTable;

export const CODE_TTL_MS = 10 * MINUTE;
export const CODE_MAX_ATTEMPTS = 5;
export const CODES_PER_HOUR = 5;

export { normalizeEmail };

export async function findPersonByEmail(ctx: Pick<Ctx, 'db'>, email: string): Promise<PersonRow | undefined> {
  return ctx.db.selectFrom('people').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

export async function findPersonById(ctx: Pick<Ctx, 'db'>, id: string): Promise<PersonRow | undefined> {
  return ctx.db.selectFrom('people').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findOrCreatePerson(ctx: Pick<Ctx, 'db' | 'clock'>, input: { email: string; name?: string; locale?: string }): Promise<PersonRow> {
  const email = normalizeEmail(input.email);
  const existing = await ctx.db.selectFrom('people').selectAll().where('email', '=', email).executeTakeFirst();
  if (existing) return existing;
  const now = iso(ctx.clock.now());
  const person: PersonRow = { id: newId('per'), email, name: input.name ?? null, locale: input.locale ?? 'en', created_at: now, updated_at: now };
  await ctx.db.insertInto('people').values(person).execute();
  return person;
}

export async function membershipsOf(ctx: Pick<Ctx, 'db'>, personId: string) {
  return ctx.db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
    .select(['memberships.workspace_id', 'memberships.role', 'workspaces.name as workspace_name', 'memberships.id as member_id'])
    .where('memberships.person_id', '=', personId)
    .where('workspaces.deleted_at', 'is', null)
    .orderBy('workspaces.id')
    .execute() as Promise<{ workspace_id: string; role: Role; workspace_name: string; member_id: string }[]>;
}

/** Sign-in codes need the server's own mail account; without one the operator hands out links. */
export const mailNotConfigured = () =>
  conflict(
    'this server has no mail account (SVC_SMTP_HOST is not set), so sign-in codes cannot be mailed; ask the operator for a sign-in link (svc person sign-in-link --email <address>)',
    'mail_not_configured',
  );

function codeHash(email: string, code: string) {
  return sha256Hex(`${email}\n${code}`);
}

/** The job that makes and mails a sign-in code (see requestSignInCode). */
export const SIGN_IN_CODE_JOB = 'people.sign_in_code';

/**
 * Asks for a one-time sign-in code. The request does the same work whether or not the address has
 * an account, so neither its answer nor its time tells: it counts against the address's limit of
 * CODES_PER_HOUR (addresses without an account included) and stores a job. The job decides whether
 * a code is made and mailed (an account, or open sign-up: a code lets a new person in), so the
 * answer never waits for the mail server.
 */
export async function requestSignInCode(ctx: Ctx, rawEmail: string): Promise<void> {
  const email = normalizeEmail(rawEmail);
  if (!ctx.config.smtp) throw mailNotConfigured();
  await new RateLimiter(ctx, 'sign_in_codes_per_address', CODES_PER_HOUR, HOUR).hit(email, 'too many sign-in codes for this address; try again later');
  await enqueue(ctx.db, ctx.clock, { kind: SIGN_IN_CODE_JOB, payload: { email } });
  ctx.jobs.wake();
}

/**
 * Makes a code for an address that may sign in and mails it. A mail server that fails is logged
 * ("mail not sent") and not tried again: the person asks for another code, which a retry of this
 * one could not be told apart from.
 */
export async function mailSignInCode(ctx: Ctx, email: string): Promise<void> {
  const person = await findPersonByEmail(ctx, email);
  if (!person && ctx.config.signup !== 'open') return;
  const now = ctx.clock.now();
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await ctx.db
    .insertInto('sign_in_codes')
    .values({ id: newId('code'), email, code_hash: codeHash(email, code), created_at: iso(now), expires_at: iso(now.getTime() + CODE_TTL_MS), used_at: null })
    .execute();
  await ctx.systemMail.send(
    {
      to: email,
      subject: `Your sign-in code: ${code}`,
      text: `Your sign-in code is ${code}.\n\nIt works once, for 10 minutes. If you did not ask for it, ignore this mail.\n`,
    },
    'sign-in code',
  );
}

export function signInCodeJob(ctx: Ctx): JobKind<{ email: string }> {
  return { kind: SIGN_IN_CODE_JOB, leaseMs: MINUTE, backoffMs: () => undefined, run: ({ email }) => mailSignInCode(ctx, email) };
}

/** Checks a code and opens a session. Returns the bearer/cookie token once. */
export async function verifySignInCode(
  ctx: Ctx,
  rawEmail: string,
  code: string,
  opts: { userAgent?: string } = {},
): Promise<{ token: string; person: PersonRow; expiresAt: string }> {
  const email = normalizeEmail(rawEmail);
  const now = ctx.clock.now();
  const row = await ctx.db
    .selectFrom('sign_in_codes')
    .selectAll()
    .where('email', '=', email)
    .where('used_at', 'is', null)
    .where('expires_at', '>', iso(now))
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  const refuse = unauthorized('the code is wrong or has expired');
  if (!row || row.attempts >= CODE_MAX_ATTEMPTS) throw refuse;
  if (!safeEqual(row.code_hash, codeHash(email, code.trim()))) {
    await ctx.db
      .updateTable('sign_in_codes')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id', '=', row.id)
      .execute();
    throw refuse;
  }
  const used = await ctx.db
    .updateTable('sign_in_codes')
    .set({ used_at: iso(now) })
    .where('id', '=', row.id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (Number(used.numUpdatedRows) !== 1) throw refuse;
  const person = (await findPersonByEmail(ctx, email)) ?? (ctx.config.signup === 'open' ? await findOrCreatePerson(ctx, { email }) : undefined);
  if (!person) throw refuse;
  return { ...(await createSession(ctx, person.id, opts)), person };
}

export async function createSession(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  personId: string,
  opts: { userAgent?: string } = {},
): Promise<{ token: string; expiresAt: string }> {
  const now = ctx.clock.now();
  const token = SESSION_TOKEN_PREFIX + randomToken(32);
  const expiresAt = iso(now.getTime() + SESSION_IDLE_MS);
  await ctx.db
    .insertInto('sessions')
    .values({
      id: newId('ses'),
      person_id: personId,
      token_hash: sha256Hex(token),
      created_at: iso(now),
      last_used_at: iso(now),
      expires_at: expiresAt,
      user_agent: opts.userAgent?.slice(0, 200) ?? null,
    })
    .execute();
  return { token, expiresAt };
}

export async function endSession(ctx: Pick<Ctx, 'db'>, sessionId: string): Promise<void> {
  await ctx.db.deleteFrom('sessions').where('id', '=', sessionId).execute();
}

/** The languages the panel speaks (and `svc bootstrap --locale` takes). */
export const PERSON_LOCALES = ['en', 'tr'] as const;
export const PERSON_NAME_MAX = 100;
export const UNDO_SEND_MAX_SECONDS = 60;
export const UNDO_SEND_DEFAULT_SECONDS = 10;

/** A person changes their own name and panel language; a name is trimmed and 1–100 characters. */
export async function updatePerson(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  personId: string,
  patch: { name?: string; locale?: string; undo_send_seconds?: number },
): Promise<PersonRow> {
  if (patch.name === undefined && patch.locale === undefined && patch.undo_send_seconds === undefined)
    throw invalid('nothing to change: name one of name, locale, undo_send_seconds');
  const set: Partial<PersonRow> = {};
  if (patch.name !== undefined) {
    const name = patch.name.trim();
    if (charCount(name) < 1 || charCount(name) > PERSON_NAME_MAX) throw invalid(`name must be 1 to ${PERSON_NAME_MAX} characters after trimming`);
    set.name = name;
  }
  if (patch.locale !== undefined) {
    if (!(PERSON_LOCALES as readonly string[]).includes(patch.locale)) throw invalid(`locale must be one of ${PERSON_LOCALES.join(', ')}`);
    set.locale = patch.locale;
  }
  if (patch.undo_send_seconds !== undefined) {
    const n = patch.undo_send_seconds;
    if (!Number.isInteger(n) || n < 0 || n > UNDO_SEND_MAX_SECONDS)
      throw invalid(`undo_send_seconds must be a whole number from 0 (off) to ${UNDO_SEND_MAX_SECONDS}`, {
        issues: [{ path: 'undo_send_seconds', message: `0 to ${UNDO_SEND_MAX_SECONDS}` }],
      });
    set.undo_send_seconds = n;
  }
  set.updated_at = iso(ctx.clock.now());
  const result = await ctx.db.updateTable('people').set(set).where('id', '=', personId).executeTakeFirst();
  const updated = Number(result.numUpdatedRows) === 1 ? await findPersonById(ctx, personId) : undefined;
  if (!updated) throw notFound('person');
  return updated;
}

export function formatPerson(p: PersonRow) {
  return {
    id: p.id,
    email: p.email,
    name: p.name,
    locale: p.locale,
    undo_send_seconds: p.undo_send_seconds ?? UNDO_SEND_DEFAULT_SECONDS,
    created_at: p.created_at,
  };
}

export interface PersonDeletion {
  person_id: string;
  memberships: number;
  sessions: number;
  passkeys: number;
  push_subscriptions: number;
}

/** Live workspaces where this person is the only owner (their deletion is refused while any exist). */
export async function workspacesOnlyOwnedBy(db: Db, personId: string): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('memberships as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['w.id', 'w.name'])
    .where('m.person_id', '=', personId)
    .where('m.role', '=', 'owner')
    .where('w.deleted_at', 'is', null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('memberships as o')
            .select('o.id')
            .whereRef('o.workspace_id', '=', 'm.workspace_id')
            .where('o.role', '=', 'owner')
            .whereRef('o.person_id', '!=', 'm.person_id'),
        ),
      ),
    )
    .orderBy('w.id')
    .execute();
}

/**
 * Deletes an account with its memberships, sessions, passkeys and push subscriptions; the person's
 * messages stay in their conversations without an author, and conversations assigned to them become
 * unassigned. Refused (409 only_owner, naming the workspaces) while they are a workspace's only owner.
 */
export async function deletePerson(ctx: Pick<Ctx, 'db' | 'dialect' | 'log' | 'hub'>, personId: string): Promise<PersonDeletion> {
  const deleted = await ctx.db.transaction().execute(async (trx) => {
    // Postgres: the workspaces this person owns are locked, so that two owners deleting themselves
    // at once cannot both pass the check (SQLite transactions are serialized already).
    if (ctx.dialect === 'postgres') {
      await trx
        .selectFrom('workspaces')
        .select('id')
        .where('id', 'in', (eb) => eb.selectFrom('memberships').select('workspace_id').where('person_id', '=', personId).where('role', '=', 'owner'))
        .forUpdate()
        .execute();
    }
    const person = await trx.selectFrom('people').select(['id', 'email']).where('id', '=', personId).executeTakeFirst();
    if (!person) throw notFound('person');
    const sole = await workspacesOnlyOwnedBy(trx, personId);
    if (sole.length) {
      const named = sole.map((w) => `${JSON.stringify(w.name)} (${w.id})`).join(', ');
      throw conflict(`the account is the only owner of workspace ${named}; make another member an owner or delete the workspace first`, 'only_owner', {
        workspaces: sole,
      });
    }
    const removed = async (table: 'memberships' | 'sessions' | 'passkeys' | 'push_subscriptions') =>
      Number((await trx.deleteFrom(table).where('person_id', '=', personId).executeTakeFirst()).numDeletedRows);
    const result: PersonDeletion = {
      person_id: personId,
      memberships: await removed('memberships'),
      sessions: await removed('sessions'),
      passkeys: await removed('passkeys'),
      push_subscriptions: await removed('push_subscriptions'),
    };
    await forgetPersonInConversations(trx, personId);
    await trx.deleteFrom('sign_in_codes').where('email', '=', person.email).execute();
    await trx.deleteFrom('sign_in_links').where('person_id', '=', personId).execute();
    await trx.deleteFrom('people').where('id', '=', personId).execute();
    return result;
  });
  ctx.log.info('account deleted', { person_id: personId });
  ctx.hub.emit(ACCESS_REVOKED, { personId } satisfies AccessRevoked);
  return deleted;
}
