// Mailboxes that connect with a sign-in instead of a password (Google, Microsoft 365/Outlook.com):
// the OAuth 2.0 authorization-code flow with PKCE (S256) and a single-use `state`, the token
// exchange, and the access tokens IMAP's XOAUTH2 needs, refreshed before they expire.
//
// What is kept: the grant (refresh token, and the current access token with its expiry) as one
// JSON object sealed under the master key in the migration's `password_sealed` column, so it is
// never shown, never logged, and deleted on exactly the occasions a password is. Scopes are the
// providers' IMAP scopes only; the read-only IMAP check (imap.ts) is what keeps the access read-only.
import { createHash, randomBytes } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Ctx } from '../../context.js';
import { iso, MINUTE } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { MigrationRow } from '../store.js';
import { findPreset, operatorSettings, type Preset } from './presets.js';
import { SourceError } from './source-error.js';

export type SignInProviderId = 'google' | 'microsoft';

/** How long a started sign-in may take before its state is refused. */
export const SIGN_IN_TTL_MS = 15 * MINUTE;
/** An access token this close to its expiry is refreshed before use. */
export const REFRESH_MARGIN_MS = 5 * MINUTE;
const TOKEN_TIMEOUT_MS = 15_000;

export const SIGN_IN_CALLBACK_PATH = '/v1/migration-sign-in/callback';

interface ProviderEndpoints {
  authorize: string;
  token: string;
  scope: string;
  /** Extra authorize parameters: what makes the provider hand out a refresh token. */
  extra: Record<string, string>;
}

/** Google's only IMAP scope is full mail access; svc uses it read-only through the IMAP check. */
export const GOOGLE_SCOPE = 'https://mail.google.com/';
export const MICROSOFT_SCOPE = 'https://outlook.office.com/IMAP.AccessAsUser.All offline_access';

function endpoints(config: Pick<Config, 'oauth'>, provider: SignInProviderId): ProviderEndpoints {
  const base = config.oauth.endpoint;
  if (provider === 'google')
    return {
      authorize: base ? `${base}/google/authorize` : 'https://accounts.google.com/o/oauth2/v2/auth',
      token: base ? `${base}/google/token` : 'https://oauth2.googleapis.com/token',
      scope: GOOGLE_SCOPE,
      extra: { access_type: 'offline', prompt: 'consent' },
    };
  const tenant = encodeURIComponent(config.oauth.microsoft?.tenant ?? 'common');
  return {
    authorize: base ? `${base}/microsoft/authorize` : `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/authorize`,
    token: base ? `${base}/microsoft/token` : `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`,
    scope: MICROSOFT_SCOPE,
    extra: { response_mode: 'query' },
  };
}

export function isSignInProvider(provider: string): provider is SignInProviderId {
  return findPreset(provider)?.kind === 'sign_in' && (provider === 'google' || provider === 'microsoft');
}

/** The operator's OAuth client for a provider; 409 provider_not_configured without one. */
export function clientOf(config: Pick<Config, 'oauth'>, preset: Preset): { clientId: string; clientSecret: string } {
  const client = preset.id === 'google' || preset.id === 'microsoft' ? config.oauth[preset.id] : undefined;
  if (!client) throw notConfigured(preset);
  return client;
}

export function notConfigured(preset: Preset): AppError {
  const settings = operatorSettings(preset);
  return new AppError(
    409,
    'provider_not_configured',
    settings.length
      ? `${preset.name} connects with a sign-in, and the operator of this server has not set ${settings.filter((s) => !s.endsWith('_TENANT')).join(' and ')} (see README, "Sign-in providers"); until then use an IMAP preset with an app password or an export file`
      : `${preset.name} is not available on this server yet; use an IMAP preset with an app password or an export file`,
    { provider: preset.id, settings },
  );
}

export function redirectUri(config: Pick<Config, 'publicUrl'>): string {
  return `${config.publicUrl}${SIGN_IN_CALLBACK_PATH}`;
}

const base64url = (buf: Buffer) => buf.toString('base64url');

/** A new PKCE pair and state. */
export function newSignInSecrets(): { state: string; verifier: string; challenge: string } {
  const verifier = base64url(randomBytes(48));
  return { state: base64url(randomBytes(32)), verifier, challenge: base64url(createHash('sha256').update(verifier).digest()) };
}

export function authorizeUrl(
  config: Pick<Config, 'oauth' | 'publicUrl'>,
  provider: SignInProviderId,
  input: { clientId: string; state: string; challenge: string; loginHint: string; scope?: string },
): string {
  const e = endpoints(config, provider);
  const url = new URL(e.authorize);
  const params: Record<string, string> = {
    client_id: input.clientId,
    redirect_uri: redirectUri(config),
    response_type: 'code',
    scope: input.scope ?? e.scope,
    state: input.state,
    code_challenge: input.challenge,
    code_challenge_method: 'S256',
    login_hint: input.loginHint,
    ...e.extra,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

/** What is sealed in password_sealed for a sign-in provider. */
export interface Grant {
  refresh_token: string;
  access_token: string | null;
  /** When the access token expires (ISO). */
  expires_at: string | null;
  /** The scope renewals ask for, when not the holder's usual one (a migration's Microsoft sign-in handed to a channel reads only). */
  scope?: string;
}

interface TokenAnswer {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
  error?: unknown;
  error_description?: unknown;
}

/** A token endpoint's refusal, in the provider's words (first line, no secrets: they never echo them). */
export class TokenError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status: number,
  ) {
    super(`${error}${description ? `: ${description}` : ''}`);
  }
}

export async function tokenRequest(config: Pick<Config, 'oauth'>, provider: SignInProviderId, form: Record<string, string>): Promise<TokenAnswer> {
  const e = endpoints(config, provider);
  let res: Response;
  try {
    res = await fetch(e.token, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (error) {
    throw new TokenError('unreachable', `the token endpoint did not answer (${(error as Error).name})`, 0);
  }
  const text = (await res.text()).slice(0, 20_000);
  let body: TokenAnswer = {};
  try {
    body = JSON.parse(text) as TokenAnswer;
  } catch {
    /* not JSON: judged by the status below */
  }
  if (!res.ok || typeof body.access_token !== 'string') {
    const description = typeof body.error_description === 'string' ? body.error_description.split(/\r?\n/)[0].slice(0, 200) : '';
    throw new TokenError(typeof body.error === 'string' ? body.error.slice(0, 60) : `http_${res.status}`, description, res.status);
  }
  return body;
}

export function grantFrom(answer: TokenAnswer, now: Date, previousRefresh?: string): Grant {
  const refresh = typeof answer.refresh_token === 'string' && answer.refresh_token ? answer.refresh_token : previousRefresh;
  if (!refresh) throw new TokenError('no_refresh_token', 'the provider gave no refresh token (offline access was not granted)', 200);
  const seconds = typeof answer.expires_in === 'number' ? answer.expires_in : Number(answer.expires_in ?? 3600);
  return {
    refresh_token: refresh,
    access_token: answer.access_token as string,
    expires_at: iso(now.getTime() + (Number.isFinite(seconds) && seconds > 0 ? seconds : 3600) * 1000),
  };
}

/** Exchanges the callback's code (with the PKCE verifier) for the grant. */
export async function exchangeCode(ctx: Pick<Ctx, 'config' | 'clock'>, provider: SignInProviderId, input: { code: string; verifier: string }): Promise<Grant> {
  const client = clientOf(ctx.config, findPreset(provider)!);
  const answer = await tokenRequest(ctx.config, provider, {
    grant_type: 'authorization_code',
    code: input.code,
    code_verifier: input.verifier,
    redirect_uri: redirectUri(ctx.config),
    client_id: client.clientId,
    client_secret: client.clientSecret,
  });
  return grantFrom(answer, ctx.clock.now());
}

function providerName(provider: SignInProviderId): string {
  return provider === 'google' ? 'Google' : 'Microsoft';
}

/**
 * The access token for the mailbox, refreshed first when it expires within REFRESH_MARGIN_MS (the
 * new grant is sealed back unless the credentials were deleted or replaced meanwhile). A refused
 * grant (revoked, expired, consent withdrawn) is a SourceError of kind 'sign_in': the migration
 * waits for a new sign-in.
 */
export async function accessTokenFor(ctx: Pick<Ctx, 'config' | 'clock' | 'sealer' | 'db'>, m: MigrationRow): Promise<string> {
  const provider = m.provider as SignInProviderId;
  if (!m.password_sealed)
    throw new SourceError('login', `not signed in with ${providerName(provider)}; sign in with PUT /v1/migrations/{id}/credentials first`, 'sign_in');
  const preset = findPreset(provider)!;
  const client = ctx.config.oauth[provider];
  if (!client) throw new SourceError('login', `${operatorSettings(preset)[0]} is no longer set on this server: the operator must set it again`, 'sign_in');
  const grant = JSON.parse(ctx.sealer.open(m.password_sealed)) as Grant;
  const now = ctx.clock.now();
  if (grant.access_token && grant.expires_at && Date.parse(grant.expires_at) - now.getTime() > REFRESH_MARGIN_MS) return grant.access_token;
  let fresh: Grant;
  try {
    const answer = await tokenRequest(ctx.config, provider, {
      grant_type: 'refresh_token',
      refresh_token: grant.refresh_token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      ...(provider === 'microsoft' ? { scope: MICROSOFT_SCOPE } : {}),
    });
    fresh = grantFrom(answer, now, grant.refresh_token);
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    if (error.status === 0 || error.status >= 500 || error.status === 429)
      throw new SourceError('login', `${providerName(provider)} could not renew the sign-in for now (${error.message})`, 'connect');
    throw new SourceError(
      'login',
      error.error === 'invalid_grant'
        ? `${providerName(provider)} no longer accepts this sign-in (it was revoked, expired or its consent withdrawn: ${error.message}); sign in again to continue where the migration stopped`
        : `${providerName(provider)} refused to renew the sign-in (${error.message}); sign in again to continue`,
      'sign_in',
    );
  }
  await ctx.db
    .updateTable('mailbox_migrations')
    .set({ password_sealed: ctx.sealer.seal(JSON.stringify(fresh)) })
    .where('id', '=', m.id)
    .where('password_sealed', '=', m.password_sealed)
    .execute();
  return fresh.access_token!;
}
