// Connecting a mailbox of a sign-in provider (Google, Microsoft): PUT …/credentials starts the
// sign-in (a single-use, expiring state bound to the migration and to who started it, and the PKCE
// verifier, sealed) and answers the provider's address to open; the provider sends the browser to
// GET /v1/migration-sign-in/callback, which exchanges the code and stores the grant sealed, like a
// password (credentials_set, or credentials_replaced; a migration waiting for a new sign-in goes on
// where it stopped), then sends the browser back to the wizard.
import type { Access } from '../auth/access.js';
import { authorize } from '../auth/access.js';
import { currentAccessOf } from '../auth/credentials.js';
import type { Ctx } from '../context.js';
import { inTransaction } from '../db/transaction.js';
import { iso } from '../platform/clock.js';
import { sha256Hex } from '../platform/crypto.js';
import { AppError, forbidden, invalid } from '../platform/errors.js';
import { act, getMigrationView, setCredentials, testConnection } from './service.js';
import { findPreset } from './sources/presets.js';
import {
  authorizeUrl,
  clientOf,
  exchangeCode,
  type Grant,
  isSignInProvider,
  newSignInSecrets,
  SIGN_IN_TTL_MS,
  type SignInProviderId,
  TokenError,
} from './sources/sign-in.js';
import { allowedActions, requireAction, resumedFromAttention } from './states.js';
import { actorOf, getMigration, logActivity, type MigrationRow, markCredentialLinkUsed } from './store.js';

/** What PUT …/credentials takes: a password, a help desk's API credentials, or (sign-in providers) at most the address. */
export type CredentialsInput = Parameters<typeof setCredentials>[3];

/**
 * PUT …/credentials: a password for IMAP providers (API credentials for help desks: setCredentials); for sign-in providers the start of a sign-in,
 * answered with `sign_in.url` (the address to open) next to the migration.
 */
export async function putCredentials(ctx: Ctx, access: Access, id: string, input: CredentialsInput) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  if (!isSignInProvider(m.provider)) return setCredentials(ctx, access, id, input);
  if (Object.entries(input).some(([k, v]) => k !== 'username' && v !== undefined))
    throw invalid(`${findPreset(m.provider)!.name} connects with a sign-in, not a password: send at most username`);
  return startSignIn(ctx, access, m, input.username);
}

async function startSignIn(ctx: Ctx, access: Access, m: MigrationRow, rawUsername: string | undefined) {
  const signIn = await beginSignIn(ctx, access, m, rawUsername);
  return { ...(await getMigrationView(ctx, access, m.id)), sign_in: signIn };
}

/**
 * Stores a new sign-in of the migration and answers the provider's address. `viaLink` is the
 * credentials link it was started from: then whoever holds the link finishes it, in any browser.
 */
export async function beginSignIn(ctx: Ctx, access: Access, m: MigrationRow, rawUsername: string | undefined, viaLink?: { linkId: string }) {
  const preset = findPreset(m.provider)!;
  const client = clientOf(ctx.config, preset);
  requireAction(m, 'credentials');
  const username = rawUsername?.trim() || m.username || m.source_address;
  if (!username || username.length > 320 || /[\u0000-\u001f\s]/.test(username))
    throw invalid('name the address to sign in as: username (or source_address of the migration)');
  const secrets = newSignInSecrets();
  const now = ctx.clock.now();
  const expiresAt = iso(now.getTime() + SIGN_IN_TTL_MS);
  const actor = actorOf(access);
  await inTransaction(ctx.db, async (trx) => {
    // Expired sign-ins of any migration go; a new sign-in ends the earlier ones of this migration.
    await trx.deleteFrom('migration_sign_ins').where('expires_at', '<=', iso(now)).execute();
    await trx.deleteFrom('migration_sign_ins').where('migration_id', '=', m.id).execute();
    await trx
      .insertInto('migration_sign_ins')
      .values({
        state_hash: sha256Hex(secrets.state),
        migration_id: m.id,
        workspace_id: m.workspace_id,
        provider: m.provider,
        username,
        verifier_sealed: ctx.sealer.seal(secrets.verifier),
        created_by_type: viaLink ? 'link' : actor.type === 'member' ? 'member' : 'api_key',
        created_by_id: viaLink ? viaLink.linkId : actor.id!,
        created_at: iso(now),
        expires_at: expiresAt,
      })
      .execute();
    await logActivity({ db: trx, clock: ctx.clock }, m, actor, 'sign_in_started', { provider: m.provider, username, ...(viaLink ? { via: 'link' } : {}) });
  });
  const url = authorizeUrl(ctx.config, m.provider as SignInProviderId, {
    clientId: client.clientId,
    state: secrets.state,
    challenge: secrets.challenge,
    loginHint: username,
  });
  return { provider: m.provider, url, expires_at: expiresAt };
}

export interface CallbackInput {
  state?: string;
  code?: string;
  error?: string;
}

const STATE_GONE = 'this sign-in is unknown, used or expired; start it again from the migration (PUT /v1/migrations/{id}/credentials)';

/**
 * The provider's redirect. Returns where to send the browser: the wizard's page of the migration
 * with `signed_in=<provider>`, or `sign_in_error=<code>` when the person declined or the exchange
 * failed. An unknown, used or expired state, or a member's sign-in finished in another person's
 * browser, is refused (4xx) without touching the migration.
 */
export async function finishSignIn(ctx: Ctx, input: CallbackInput, browserPersonId: string | undefined): Promise<{ redirect: string }> {
  if (!input.state || input.state.length > 200) throw new AppError(400, 'sign_in_expired', STATE_GONE);
  const hash = sha256Hex(input.state);
  const row = await ctx.db.selectFrom('migration_sign_ins').selectAll().where('state_hash', '=', hash).executeTakeFirst();
  if (!row || row.expires_at <= iso(ctx.clock.now())) throw new AppError(400, 'sign_in_expired', STATE_GONE);
  // A credentials link's sign-in is finished by whoever holds the link, in the name of its creator.
  const link =
    row.created_by_type === 'link'
      ? await ctx.db
          .selectFrom('migration_credential_links')
          .select(['id', 'created_by_type', 'created_by_id', 'used_at'])
          .where('id', '=', row.created_by_id)
          .executeTakeFirst()
      : undefined;
  if (row.created_by_type === 'link' && (!link || link.used_at !== null)) throw new AppError(400, 'sign_in_expired', STATE_GONE);
  if (row.created_by_type === 'member' && row.created_by_id !== browserPersonId)
    throw forbidden('this sign-in was started by another person (or in a browser signed out of the panel); start it again while signed in');
  // Single use: whoever deletes the row finishes the sign-in.
  const deleted = await ctx.db.deleteFrom('migration_sign_ins').where('state_hash', '=', hash).executeTakeFirst();
  if (Number(deleted.numDeletedRows) !== 1) throw new AppError(400, 'sign_in_expired', STATE_GONE);
  const creator = link ? { type: link.created_by_type, id: link.created_by_id } : { type: row.created_by_type as 'member' | 'api_key', id: row.created_by_id };
  const access = await currentAccessOf(ctx, row.workspace_id, creator, 'sign-in');
  if (!access) throw forbidden('whoever started this sign-in may no longer manage migrations');
  authorize(access, 'migrations:manage');
  // Back to the wizard, or to the link's page (which works signed out).
  const back = (query: string) =>
    `${ctx.config.publicUrl}${link ? '/migrations/' : '/settings/migrations/'}${encodeURIComponent(row.migration_id)}${link ? '/connect' : ''}?${query}`;
  const failed = async (code: string, message: string) => {
    const m = await getMigration(ctx.db, row.workspace_id, row.migration_id);
    await inTransaction(ctx.db, (trx) =>
      logActivity({ db: trx, clock: ctx.clock }, m, actorOf(access), 'sign_in_failed', { provider: row.provider, error: code, message }),
    );
    return { redirect: back(`sign_in_error=${encodeURIComponent(code)}`) };
  };
  if (input.error || !input.code) {
    const code = (input.error ?? 'no_code').replace(/[^a-z0-9_]/gi, '').slice(0, 60) || 'error';
    return failed(code, code === 'access_denied' ? 'the sign-in was declined at the provider' : 'the provider did not give a code');
  }
  let grant: Grant;
  try {
    grant = await exchangeCode(ctx, row.provider as SignInProviderId, { code: input.code.slice(0, 4000), verifier: ctx.sealer.open(row.verifier_sealed) });
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    return failed(error.error === 'no_refresh_token' ? 'no_refresh_token' : 'token_exchange_failed', error.message);
  }
  const sealed = ctx.sealer.seal(JSON.stringify(grant));
  await act(ctx, access, row.migration_id, 'credentials', async (m) => {
    const set: Partial<MigrationRow> = { username: row.username, password_sealed: sealed, credentials_set_at: iso(ctx.clock.now()) };
    // A new sign-in fixes a refused one: the work continues where it stopped.
    if (m.state === 'needs_attention') Object.assign(set, resumedFromAttention(m));
    return {
      set,
      log: m.password_sealed ? 'credentials_replaced' : 'credentials_set',
      detail: { username: row.username, via: link ? 'link' : 'sign_in', provider: row.provider },
    };
  });
  if (!link) return { redirect: back(`signed_in=${encodeURIComponent(row.provider)}`) };
  // As with a password entered through a link: the connection is tested, and a passing test uses the link up.
  let connected = false;
  try {
    const m = await getMigration(ctx.db, row.workspace_id, row.migration_id);
    connected = allowedActions(m).includes('test') ? (await testConnection(ctx, access, row.migration_id)).result.ok : true;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
  }
  if (connected) await markCredentialLinkUsed(ctx, link.id);
  return { redirect: back(`signed_in=${encodeURIComponent(row.provider)}&connected=${connected ? 1 : 0}`) };
}
