// One-time sign-in links the operator makes (svc bootstrap, svc person sign-in-link): the way in on
// a server without a mail account. The token is shown once and stored as a SHA-256 hash.
import type { Ctx } from '../context.js';
import { iso, MINUTE } from '../platform/clock.js';
import { randomToken, sha256Hex } from '../platform/crypto.js';
import { unauthorized } from '../platform/errors.js';
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

/** Uses a link once and opens a session; 401 for a wrong, used or expired link. */
export async function redeemSignInLink(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  token: string,
  opts: { userAgent?: string } = {},
): Promise<{ token: string; expiresAt: string; person: PersonRow }> {
  const now = iso(ctx.clock.now());
  const refuse = unauthorized('the sign-in link is wrong, was used already or has expired; ask the operator for a new one');
  if (!token.startsWith(SIGN_IN_LINK_PREFIX)) throw refuse;
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
