// One-time sign-in links the operator makes (svc bootstrap, svc person sign-in-link): the way in on
// a server without a mail account. The token is shown once and stored as a SHA-256 hash.
import type { Ctx } from '../context.js';
import { iso, MINUTE } from '../platform/clock.js';
import { randomToken, sha256Hex } from '../platform/crypto.js';
import { AppError, unauthorized } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { createSession, findPersonById, type PersonRow } from './service.js';

export const SIGN_IN_LINK_TTL_MS = 15 * MINUTE;
export const SIGN_IN_LINK_PREFIX = 'svc_link_';
/**
 * Where the panel takes a link. The token is in the fragment, which browsers never send to the
 * server (nor in Referer), so it stays out of access logs; the panel posts it to POST /v1/auth/link.
 */
export const SIGN_IN_LINK_PATH = '/sign-in/link#';

export function signInLinkUrl(publicUrl: string, token: string): string {
  return `${publicUrl}${SIGN_IN_LINK_PATH}${token}`;
}

export async function createSignInLink(
  ctx: Pick<Ctx, 'db' | 'clock' | 'config'>,
  personId: string,
): Promise<{ url: string; token: string; expiresAt: string }> {
  const now = ctx.clock.now();
  const token = SIGN_IN_LINK_PREFIX + randomToken(32);
  const expiresAt = iso(now.getTime() + SIGN_IN_LINK_TTL_MS);
  await ctx.db
    .insertInto('sign_in_links')
    .values({ id: newId('sil'), person_id: personId, token_hash: sha256Hex(token), created_at: iso(now), expires_at: expiresAt, used_at: null })
    .execute();
  return { url: signInLinkUrl(ctx.config.publicUrl, token), token, expiresAt };
}

const refuseLink = () => unauthorized('the sign-in link is wrong, was used already or has expired; ask the operator for a new one');

/**
 * The account a live link signs in to, without using it: the panel names it and asks before it
 * signs in, so a page elsewhere that opens a link cannot sign a browser into another account.
 */
export async function signInLinkAccount(ctx: Pick<Ctx, 'db' | 'clock'>, token: string): Promise<PersonRow> {
  if (!token.startsWith(SIGN_IN_LINK_PREFIX)) throw refuseLink();
  const link = await ctx.db
    .selectFrom('sign_in_links')
    .select('person_id')
    .where('token_hash', '=', sha256Hex(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', iso(ctx.clock.now()))
    .executeTakeFirst();
  const person = link ? await findPersonById(ctx, link.person_id) : undefined;
  if (!person) throw refuseLink();
  return person;
}

/**
 * Uses a link once and opens a session; 401 for a wrong, used or expired link. `signedInAs` is the
 * person of the browser's live session: a link of another account is refused (409
 * `signed_in_as_other`) unless `switchAccount`, so a session is never replaced silently.
 */
export async function redeemSignInLink(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  token: string,
  opts: { userAgent?: string; signedInAs?: string; switchAccount?: boolean } = {},
): Promise<{ token: string; expiresAt: string; person: PersonRow }> {
  const now = iso(ctx.clock.now());
  const refuse = refuseLink();
  if (!token.startsWith(SIGN_IN_LINK_PREFIX)) throw refuse;
  if (opts.signedInAs && !opts.switchAccount && (await signInLinkAccount(ctx, token)).id !== opts.signedInAs) {
    throw new AppError(409, 'signed_in_as_other', 'this browser is signed in to another account; confirm the switch (switch_account: true)');
  }
  return ctx.db.transaction().execute(async (trx) => {
    const link = await trx.selectFrom('sign_in_links').select(['id', 'person_id']).where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
    if (!link) throw refuse;
    const used = await trx
      .updateTable('sign_in_links')
      .set({ used_at: now })
      .where('id', '=', link.id)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) throw refuse;
    const person = await findPersonById({ db: trx }, link.person_id);
    if (!person) throw refuse;
    const session = await createSession({ db: trx, clock: ctx.clock }, person.id, opts);
    return { ...session, person };
  });
}
