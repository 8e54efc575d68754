// An e-mail channel's grant from Google or Microsoft: what sending (SMTP AUTH XOAUTH2) and reading
// the mailbox (IMAP XOAUTH2) sign in with. The grant (refresh token, current access token, expiry)
// is one JSON text sealed under the master key; it is opened here only, never shown or logged.
// A refused renewal (invalid_grant: revoked, expired, consent withdrawn) marks the grant revoked
// with the provider's words (whatever finds it first tells the managers once: revoked.ts); a
// provider that does not answer for now leaves the grant as it is (the caller retries later).
import type { Ctx } from '../context.js';
import type { ChannelGrantsTable, Db, GrantProvider } from '../db/schema.js';
import { type Grant, grantFrom, REFRESH_MARGIN_MS, TokenError, tokenRequest } from '../mailbox-migration/sources/sign-in.js';
import { iso } from '../platform/clock.js';

export type ChannelGrantRow = ChannelGrantsTable;

/** Microsoft grants name each resource: IMAP (reading) and SMTP (sending) of Exchange Online. */
export const CHANNEL_MICROSOFT_SCOPE = `https://outlook.office.com/IMAP.AccessAsUser.All https://outlook.office.com/SMTP.Send offline_access`;

export const providerName = (p: GrantProvider) => (p === 'google' ? 'Google' : 'Microsoft');

/** What a reply that failed for a refused sign-in says (and how the retry job, ./retry-job.ts, finds those replies). */
export const SIGN_IN_FAILURE_MARK = 'no longer accepts the sign-in of this channel';

/** The grant is refused: the channel needs a new sign-in. `words` are the provider's. */
export class SignInRequiredError extends Error {
  readonly signInRequired = true;
  constructor(
    readonly channelId: string,
    readonly provider: GrantProvider,
    readonly words: string,
  ) {
    super(`${providerName(provider)} ${SIGN_IN_FAILURE_MARK} (${words}); sign in again in the channel's settings`);
  }
}

/** The provider could not renew the access token for now (down, slow, rate-limited); try again later. */
export class GrantUnavailableError extends Error {}

export async function findGrant(db: Db, channelId: string): Promise<ChannelGrantRow | undefined> {
  return db.selectFrom('channel_grants').selectAll().where('channel_id', '=', channelId).executeTakeFirst();
}

export async function grantsOf(db: Db, channelIds: readonly string[]): Promise<Map<string, ChannelGrantRow>> {
  if (channelIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('channel_grants')
    .selectAll()
    .where('channel_id', 'in', [...channelIds])
    .execute();
  return new Map(rows.map((r) => [r.channel_id, r]));
}

/** What the API shows of a grant: never a token. */
export function formatGrant(g: ChannelGrantRow | undefined) {
  if (!g) return null;
  return { provider: g.provider, account: g.account, state: g.state, error: g.error, revoked_at: g.revoked_at, connected_at: g.created_at };
}

/** Stores a new grant for the channel (a new sign-in replaces the old one, revoked or not). */
export async function saveGrant(
  tx: { db: Db; clock: Ctx['clock'] },
  sealer: Ctx['sealer'],
  input: { channelId: string; workspaceId: string; provider: GrantProvider; account: string; grant: Grant },
): Promise<void> {
  const now = iso(tx.clock.now());
  const values = {
    provider: input.provider,
    account: input.account,
    grant_sealed: sealer.seal(JSON.stringify(input.grant)),
    access_expires_at: input.grant.expires_at,
    state: 'ok' as const,
    error: null,
    revoked_at: null,
    told_at: null,
    updated_at: now,
  };
  await tx.db
    .insertInto('channel_grants')
    .values({ channel_id: input.channelId, workspace_id: input.workspaceId, created_at: now, ...values })
    .onConflict((oc) => oc.column('channel_id').doUpdateSet({ ...values, created_at: now }))
    .execute();
}

/**
 * A fresh access token for the channel's grant and the account to sign in as: the stored one while
 * it is valid for more than REFRESH_MARGIN_MS, else renewed at the provider (and sealed back). With
 * `renew`, renewed anyway (the server refused the current one). Throws SignInRequiredError for a
 * missing or revoked grant (marking it revoked the first time), GrantUnavailableError when the
 * provider does not answer for now.
 */
export async function channelAccessToken(
  ctx: Pick<Ctx, 'db' | 'clock' | 'sealer' | 'config' | 'log'>,
  channelId: string,
  /** renew: renew even a valid token; provider: whose sign-in a channel without a grant waits for (for the words). */
  opts: { renew?: boolean; provider?: GrantProvider } = {},
): Promise<{ accessToken: string; username: string; provider: GrantProvider; expiresAt: string | null }> {
  const row = await findGrant(ctx.db, channelId);
  if (!row) throw new SignInRequiredError(channelId, opts.provider ?? 'google', 'the channel is not signed in yet');
  if (row.state === 'revoked') throw new SignInRequiredError(channelId, row.provider, row.error ?? 'the sign-in was revoked');
  const client = ctx.config.oauth[row.provider];
  if (!client) throw new GrantUnavailableError(`the operator no longer sets the ${providerName(row.provider)} sign-in on this server`);
  const grant = JSON.parse(ctx.sealer.open(row.grant_sealed)) as Grant;
  const now = ctx.clock.now();
  if (!opts.renew && grant.access_token && grant.expires_at && Date.parse(grant.expires_at) - now.getTime() > REFRESH_MARGIN_MS)
    return { accessToken: grant.access_token, username: row.account, provider: row.provider, expiresAt: grant.expires_at };
  let fresh: Grant;
  try {
    const answer = await tokenRequest(ctx.config, row.provider, {
      grant_type: 'refresh_token',
      refresh_token: grant.refresh_token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      ...(row.provider === 'microsoft' ? { scope: grant.scope ?? CHANNEL_MICROSOFT_SCOPE } : {}),
    });
    fresh = grantFrom(answer, now, grant.refresh_token);
    if (grant.scope) fresh.scope = grant.scope;
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    if (error.status === 0 || error.status >= 500 || error.status === 429 || error.error === 'invalid_client')
      throw new GrantUnavailableError(`${providerName(row.provider)} could not renew the sign-in for now (${error.message})`);
    await markRevoked(ctx, row, error.message);
    throw new SignInRequiredError(channelId, row.provider, error.message);
  }
  // Sealed back unless a new sign-in replaced the grant meanwhile.
  await ctx.db
    .updateTable('channel_grants')
    .set({ grant_sealed: ctx.sealer.seal(JSON.stringify(fresh)), access_expires_at: fresh.expires_at, updated_at: iso(now) })
    .where('channel_id', '=', channelId)
    .where('grant_sealed', '=', row.grant_sealed)
    .execute();
  return { accessToken: fresh.access_token!, username: row.account, provider: row.provider, expiresAt: fresh.expires_at };
}

/** The grant turns revoked with the provider's words (logged once); the team is told once by the caller's path (revoked.ts). */
async function markRevoked(ctx: Pick<Ctx, 'db' | 'clock' | 'log'>, row: ChannelGrantRow, words: string): Promise<void> {
  const now = iso(ctx.clock.now());
  const res = await ctx.db
    .updateTable('channel_grants')
    .set({ state: 'revoked', error: words.slice(0, 500), revoked_at: now, updated_at: now })
    .where('channel_id', '=', row.channel_id)
    .where('grant_sealed', '=', row.grant_sealed)
    .where('state', '=', 'ok')
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 1) ctx.log.warn('channel sign-in revoked', { channel_id: row.channel_id, provider: row.provider, error: words });
}
