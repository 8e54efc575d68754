// Links to the panel page where a person enters a migration's mailbox password. An assistant (or
// an API client) never handles the password: it asks for a link and hands it to the person, who
// opens /migrations/<id>/connect#token=… without signing in — the token is the authority.
// A link is bound to one migration, expires after CREDENTIALS_LINK_TTL_MS, and is used up once a
// password entered through it connected (a failed test leaves it usable until it expires, so a
// mistyped password can be entered again). Only the token's SHA-256 is stored; a new link ends the
// migration's earlier unused ones; the link works only while whoever asked for it may still manage
// migrations. Expired links are removed by the `migration_credential_links` retention rule
// (../lifecycle.ts).
import { type Access, authorize } from '../../auth/access.js';
import { currentAccessOf } from '../../auth/credentials.js';
import type { Ctx } from '../../context.js';
import type { MigrationCredentialLinksTable } from '../../db/schema.js';
import { iso, MINUTE } from '../../platform/clock.js';
import { sha256Hex } from '../../platform/crypto.js';
import { AppError, conflict, forbidden } from '../../platform/errors.js';
import { newId, randomText } from '../../platform/ids.js';
import { setCredentials, type TestResult, testConnection } from '../service.js';
import { beginSignIn } from '../sign-ins.js';
import { allowedActions, requireAction } from '../states.js';
import { actorOf, getMigration, logActivity, markCredentialLinkUsed } from '../store.js';
import type { HelpDeskCredentials } from './helpdesk/source.js';
import { isHelpDesk } from './helpdesk/store.js';
import { findPreset } from './presets.js';
import { clientOf, isSignInProvider } from './sign-in.js';

export const CREDENTIALS_LINK_TTL_MS = 30 * MINUTE;
const CREDENTIALS_LINK_PREFIX = 'svc_mcl_';

type LinkRow = MigrationCredentialLinksTable;

/** The panel page of a link. The token sits after '#', so it never reaches a server log or a Referer header. */
function credentialsLinkUrl(publicUrl: string, migrationId: string, token: string): string {
  return `${publicUrl}/migrations/${encodeURIComponent(migrationId)}/connect#token=${token}`;
}

/**
 * A new link for a migration that takes a password now (409 migration_state otherwise). The link
 * names SVC_PUBLIC_URL, or without it `requestOrigin`: the address the caller reached the server by.
 */
export async function createCredentialsLink(ctx: Pick<Ctx, 'db' | 'clock' | 'config'>, access: Access, migrationId: string, requestOrigin?: string) {
  const m = await getMigration(ctx.db, access.workspaceId, migrationId);
  requireAction(m, 'credentials');
  // A sign-in provider's link page starts the sign-in: only worth handing out once the operator set it up.
  if (isSignInProvider(m.provider)) clientOf(ctx.config, findPreset(m.provider)!);
  const actor = actorOf(access);
  const now = ctx.clock.now();
  const token = CREDENTIALS_LINK_PREFIX + randomText(32);
  const expiresAt = iso(now.getTime() + CREDENTIALS_LINK_TTL_MS);
  await ctx.db.transaction().execute(async (trx) => {
    // One live link per migration: the newest.
    await trx
      .updateTable('migration_credential_links')
      .set({ expires_at: iso(now) })
      .where('migration_id', '=', m.id)
      .where('used_at', 'is', null)
      .where('expires_at', '>', iso(now))
      .execute();
    await trx
      .insertInto('migration_credential_links')
      .values({
        id: newId('mcl', now.getTime()),
        migration_id: m.id,
        workspace_id: m.workspace_id,
        token_hash: sha256Hex(token),
        created_by_type: actor.type === 'member' ? 'member' : 'api_key',
        created_by_id: actor.id!,
        created_at: iso(now),
        expires_at: expiresAt,
        used_at: null,
      })
      .execute();
    await logActivity({ db: trx, clock: ctx.clock }, m, actor, 'credentials_link_created', { expires_at: expiresAt });
  });
  return {
    migration_id: m.id,
    url: credentialsLinkUrl(ctx.config.publicUrlConfigured || !requestOrigin ? ctx.config.publicUrl : requestOrigin, m.id, token),
    expires_at: expiresAt,
    single_use: true,
    mailbox: m.source_address ?? m.username,
  };
}

const GONE = 'this link is unknown, used or expired; ask for a new one';

/** The live link of this migration with this token, and the access of whoever asked for it. */
async function liveLink(ctx: Pick<Ctx, 'db' | 'clock'>, migrationId: string, token: string): Promise<{ link: LinkRow; access: Access }> {
  if (!token.startsWith(CREDENTIALS_LINK_PREFIX)) throw linkGone();
  const link = await ctx.db.selectFrom('migration_credential_links').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
  if (!link || link.migration_id !== migrationId || link.used_at !== null || link.expires_at <= iso(ctx.clock.now())) throw linkGone();
  const access = await creatorAccess(ctx, link);
  if (!access) throw forbidden('whoever made this link may no longer manage migrations; ask for a new one');
  authorize(access, 'migrations:manage');
  return { link, access };
}

function linkGone(): AppError {
  return new AppError(404, 'not_found', GONE);
}

function creatorAccess(ctx: Pick<Ctx, 'db' | 'clock'>, link: LinkRow): Promise<Access | undefined> {
  return currentAccessOf(ctx, link.workspace_id, { type: link.created_by_type, id: link.created_by_id }, 'credentials-link');
}

/** What the page shows before the password is typed: which mailbox, and where to make an app password. */
export async function describeCredentialsLink(ctx: Pick<Ctx, 'db' | 'clock'>, migrationId: string, token: string) {
  const { link, access } = await liveLink(ctx, migrationId, token);
  const m = await getMigration(ctx.db, access.workspaceId, migrationId);
  if (!allowedActions(m).includes('credentials')) throw linkGone();
  const preset = findPreset(m.provider);
  return {
    migration_id: m.id,
    provider: m.provider,
    /** help_desk: the page asks for the help desk's API credentials (Zendesk, Help Scout), not a password; sign_in: it starts the provider's sign-in. */
    kind: isHelpDesk(m) ? ('help_desk' as const) : isSignInProvider(m.provider) ? ('sign_in' as const) : ('mailbox' as const),
    mailbox: m.source_address ?? m.username,
    username: m.username,
    provider_name: preset?.name ?? m.provider,
    app_password: preset?.app_password ?? 'no',
    app_password_url: preset?.app_password_url ?? null,
    expires_at: link.expires_at,
  };
}

/**
 * The link page of a sign-in provider's mailbox (Google, Microsoft): starts the sign-in in the name
 * of whoever made the link and answers the provider's address. The callback brings the browser back
 * to the link's page; a sign-in that connected uses the link up.
 */
export async function startLinkSignIn(ctx: Ctx, migrationId: string, token: string) {
  const { link, access } = await liveLink(ctx, migrationId, token);
  const m = await getMigration(ctx.db, access.workspaceId, migrationId);
  if (!isSignInProvider(m.provider)) throw conflict('this mailbox connects with a password: PUT /v1/migration-links/{id}/credentials', 'not_sign_in_provider');
  return beginSignIn(ctx, access, m, undefined, { linkId: link.id });
}

interface LinkCredentialsResult {
  /** The connection test passed (or the migration was already past connecting): the link is used up. */
  connected: boolean;
  test: TestResult | null;
  state: string;
}

/**
 * Seals the password, or a help desk's API credentials, as PUT …/credentials does (same checks, in
 * the name of whoever asked for the link), then tests the connection when the migration allows a
 * test (a help desk's credentials are tested as they are set). A passing test uses the link up.
 */
export async function useCredentialsLink(
  ctx: Ctx,
  migrationId: string,
  input: { token: string; username?: string; password?: string } & HelpDeskCredentials,
): Promise<LinkCredentialsResult> {
  const { token, ...credentials } = input;
  const { link, access } = await liveLink(ctx, migrationId, token);
  const saved: Awaited<ReturnType<typeof setCredentials>> & { test?: TestResult } = await setCredentials(ctx, access, migrationId, credentials, {
    via: 'link',
  });
  let test: TestResult | null = saved.test ?? null;
  let state = saved.state;
  if (!test && saved.allowed_actions.includes('test')) {
    const tested = await testConnection(ctx, access, migrationId);
    test = tested.result;
    state = tested.migration.state;
  }
  const connected = test === null || test.ok;
  if (connected) await markCredentialLinkUsed(ctx, link.id);
  return { connected, test, state };
}
