// Signing an e-mail channel in with Google or Microsoft: the migration's OAuth authorization-code
// flow with PKCE (src/mailbox-migration/sources/sign-in.ts), bound to the channel and to who started
// it. The provider returns to the same redirect URI as a migration's sign-in
// (/v1/migration-sign-in/callback, which hands a channel's state to finishChannelSignIn), so the
// operator registers one address. A finished sign-in stores the grant sealed (a new one replaces a
// revoked one) and, in the same transaction, a job that sends again the replies the revoked grant
// failed.
import type { Access } from '../auth/access.js';
import { authorize } from '../auth/access.js';
import { currentAccessOf } from '../auth/credentials.js';
import { setSignInAccount } from '../channels/service.js';
import { type ChannelRow, findChannel } from '../channels/store.js';
import type { Ctx } from '../context.js';
import type { GrantProvider } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { findPreset } from '../mailbox-migration/sources/presets.js';
import {
  authorizeUrl,
  clientOf,
  exchangeCode,
  GOOGLE_SCOPE,
  type Grant,
  newSignInSecrets,
  SIGN_IN_TTL_MS,
  TokenError,
} from '../mailbox-migration/sources/sign-in.js';
import { retrySignInReaderNow } from '../mailbox-reader/store.js';
import { iso } from '../platform/clock.js';
import { sha256Hex } from '../platform/crypto.js';
import { AppError, forbidden, invalid } from '../platform/errors.js';
import { enqueue } from '../platform/jobs.js';
import { CHANNEL_MICROSOFT_SCOPE, saveGrant } from './grants.js';

export const RETRY_REPLIES_JOB = 'mail-accounts.retry-replies';
/** In-process signal after a channel's sign-in is stored (a reader waiting for it tries again at once). */
export const CHANNEL_SIGNED_IN = 'channel-signed-in';

export function scopeOf(provider: GrantProvider): string {
  return provider === 'google' ? GOOGLE_SCOPE : CHANNEL_MICROSOFT_SCOPE;
}

/** 409 provider_not_configured when the operator has not set the provider's OAuth client. */
export function requireProviderClient(ctx: Pick<Ctx, 'config'>, provider: GrantProvider) {
  return clientOf(ctx.config, findPreset(provider)!);
}

/**
 * Starts a sign-in of the channel with the provider; answers the provider's address to open
 * (single use, valid 15 minutes). The account is the channel's sending address unless named.
 */
export async function beginChannelSignIn(
  ctx: Pick<Ctx, 'db' | 'clock' | 'sealer' | 'config'>,
  access: Access,
  channel: ChannelRow,
  provider: GrantProvider,
  rawUsername?: string,
): Promise<{ provider: GrantProvider; url: string; expires_at: string }> {
  const client = requireProviderClient(ctx, provider);
  const username = rawUsername?.trim() || channel.from_address || channel.address || '';
  if (!username || username.length > 320 || /[\u0000-\u001f\s]/.test(username)) throw invalid('name the account to sign in as: sign_in_account');
  const secrets = newSignInSecrets();
  const now = ctx.clock.now();
  const expiresAt = iso(now.getTime() + SIGN_IN_TTL_MS);
  await inTransaction(ctx.db, async (trx) => {
    // Expired sign-ins of any channel go; a new sign-in ends the earlier ones of this channel.
    await trx.deleteFrom('channel_sign_ins').where('expires_at', '<=', iso(now)).execute();
    await trx.deleteFrom('channel_sign_ins').where('channel_id', '=', channel.id).execute();
    await trx
      .insertInto('channel_sign_ins')
      .values({
        state_hash: sha256Hex(secrets.state),
        channel_id: channel.id,
        workspace_id: channel.workspace_id,
        provider,
        username,
        verifier_sealed: ctx.sealer.seal(secrets.verifier),
        created_by_type: access.actor.kind === 'member' ? 'member' : 'api_key',
        created_by_id: access.actor.kind === 'member' ? access.actor.personId : access.actor.keyId,
        created_at: iso(now),
        expires_at: expiresAt,
      })
      .execute();
  });
  const url = authorizeUrl(ctx.config, provider, {
    clientId: client.clientId,
    state: secrets.state,
    challenge: secrets.challenge,
    loginHint: username,
    scope: scopeOf(provider),
  });
  return { provider, url, expires_at: expiresAt };
}

const STATE_GONE = 'this sign-in is unknown, used or expired; start it again from the channel’s settings';

/**
 * The provider's redirect for a channel's sign-in, or undefined when the state is not a channel's
 * (then it is a migration's). Returns where to send the browser: the channel's inbox settings with
 * `signed_in=<provider>`, or `sign_in_error=<code>`.
 */
export async function finishChannelSignIn(
  ctx: Ctx,
  input: { state?: string; code?: string; error?: string },
  browserPersonId: string | undefined,
): Promise<{ redirect: string } | undefined> {
  if (!input.state || input.state.length > 200) return undefined;
  const hash = sha256Hex(input.state);
  const row = await ctx.db.selectFrom('channel_sign_ins').selectAll().where('state_hash', '=', hash).executeTakeFirst();
  if (!row) return undefined;
  if (row.expires_at <= iso(ctx.clock.now())) throw new AppError(400, 'sign_in_expired', STATE_GONE);
  if (row.created_by_type === 'member' && row.created_by_id !== browserPersonId)
    throw forbidden('this sign-in was started by another person (or in a browser signed out of the panel); start it again while signed in');
  const deleted = await ctx.db.deleteFrom('channel_sign_ins').where('state_hash', '=', hash).executeTakeFirst();
  if (Number(deleted.numDeletedRows) !== 1) throw new AppError(400, 'sign_in_expired', STATE_GONE);
  const access = await currentAccessOf(ctx, row.workspace_id, { type: row.created_by_type, id: row.created_by_id }, 'sign-in');
  if (!access) throw forbidden('whoever started this sign-in may no longer manage channels');
  authorize(access, 'inboxes:manage');
  const channel = await findChannel(ctx.db, row.channel_id);
  if (!channel || channel.workspace_id !== row.workspace_id) throw new AppError(400, 'sign_in_expired', STATE_GONE);
  const back = (query: string) =>
    `${ctx.config.publicUrl}/settings/inboxes/${encodeURIComponent(channel.inbox_id)}?channel=${encodeURIComponent(channel.id)}&${query}`;
  if (input.error || !input.code) {
    const code = (input.error ?? 'no_code').replace(/[^a-z0-9_]/gi, '').slice(0, 60) || 'error';
    ctx.log.info('channel sign-in not finished', { channel_id: channel.id, provider: row.provider, error: code });
    return { redirect: back(`sign_in_error=${encodeURIComponent(code)}`) };
  }
  let grant: Grant;
  try {
    grant = await exchangeCode(ctx, row.provider, { code: input.code.slice(0, 4000), verifier: ctx.sealer.open(row.verifier_sealed) });
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    ctx.log.info('channel sign-in not finished', { channel_id: channel.id, provider: row.provider, error: error.error });
    return { redirect: back(`sign_in_error=${error.error === 'no_refresh_token' ? 'no_refresh_token' : 'token_exchange_failed'}`) };
  }
  await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    await saveGrant(tx, ctx.sealer, { channelId: channel.id, workspaceId: row.workspace_id, provider: row.provider, account: row.username, grant });
    await setSignInAccount(trx, channel.id, row.provider, row.username);
    // The replies the revoked grant failed go again (a stored job: nothing is lost to a crash).
    await enqueue(trx, ctx.clock, { kind: RETRY_REPLIES_JOB, payload: { channelId: channel.id }, uniqueKey: `${RETRY_REPLIES_JOB}:${channel.id}` });
    // A reader that failed for want of this sign-in connects again (any process; this one at once).
    await retrySignInReaderNow(trx, channel.id);
  });
  ctx.log.info('channel signed in', { channel_id: channel.id, provider: row.provider });
  ctx.hub.emit(CHANNEL_SIGNED_IN, { channelId: channel.id });
  return { redirect: back(`signed_in=${encodeURIComponent(row.provider)}`) };
}
