// A loopback stand-in for Google's and Microsoft's OAuth 2.0 servers, speaking their wire format:
// the authorize page (answered at once with a redirect carrying a code, as if the person had
// consented), the token endpoint (authorization_code with PKCE S256, refresh_token), revocation,
// and token introspection (RFC 7662) for Dovecot's oauth2 passdb, so that an IMAP XOAUTH2 login
// is judged by the same grants the server was given. Errors come in each provider's shape:
// Google `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`,
// Microsoft `{"error":"invalid_grant","error_description":"AADSTS70000: …","error_codes":[70000],…}`.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeProvider = 'google' | 'microsoft';

interface PendingCode {
  provider: FakeProvider;
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string;
  user: string;
}

interface Grant {
  provider: FakeProvider;
  clientId: string;
  user: string;
  scope: string;
  revoked: boolean;
}

export interface OAuthFake {
  /** Base URL for SVC_OAUTH_ENDPOINT: `<url>/<provider>/authorize`, `/token`, `/revoke`, `/introspect`. */
  url: string;
  introspectionUrl: string;
  /** The address the next authorize request signs in as (default: the login_hint). */
  signInAs(user: string | undefined): void;
  /** The next authorize request is refused by the person (error=access_denied). */
  denyNext(): void;
  /** Revokes every grant of a user (as when the person removes the app's access at the provider). */
  revokeUser(user: string): void;
  /** Whether this access token is live and was issued to this user (what smtp.gmail.com checks at AUTH XOAUTH2). */
  accessTokenValid(user: string, token: string): boolean;
  /** Makes every access token issued so far invalid (as when they expire). */
  expireAccessTokens(): void;
  /** Requests the token endpoint received, by grant type (secrets left out). */
  tokenRequests: { grant_type: string; provider: FakeProvider; ok: boolean }[];
  /** Authorize requests' query parameters. */
  authorizeRequests: URLSearchParams[];
  /** Introspection requests Dovecot made. */
  introspections: number;
  stop(): Promise<void>;
}

const b64url = (buf: Buffer) => buf.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

export async function startOAuthFake(clients: Record<FakeProvider, { id: string; secret: string }>): Promise<OAuthFake> {
  const codes = new Map<string, PendingCode>();
  const refreshTokens = new Map<string, Grant>();
  const accessTokens = new Map<string, { grant: Grant; live: boolean }>();
  let nextUser: string | undefined;
  let deny = false;
  const tokenRequests: OAuthFake['tokenRequests'] = [];
  const authorizeRequests: URLSearchParams[] = [];
  let introspections = 0;

  const invalidGrant = (provider: FakeProvider) =>
    provider === 'google'
      ? { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' }
      : {
          error: 'invalid_grant',
          error_description:
            'AADSTS65001: The user or administrator has not consented to use the application. Send an interactive authorization request for this user and resource.\r\nTrace ID: 0\r\nCorrelation ID: 0\r\nTimestamp: 2026-01-01 00:00:00Z',
          error_codes: [65001],
          timestamp: '2026-01-01 00:00:00Z',
          trace_id: '00000000-0000-0000-0000-000000000000',
          correlation_id: '00000000-0000-0000-0000-000000000000',
          suberror: 'consent_required',
        };

  const issue = (grant: Grant, withRefresh: boolean) => {
    const access = `at-${grant.provider}-${b64url(randomBytes(18))}`;
    accessTokens.set(access, { grant, live: true });
    const out: Record<string, unknown> = { access_token: access, token_type: 'Bearer', expires_in: 3599, scope: grant.scope };
    if (withRefresh) {
      const refresh = `rt-${grant.provider}-${b64url(randomBytes(24))}`;
      refreshTokens.set(refresh, grant);
      out.refresh_token = refresh;
    }
    return out;
  };

  const readForm = (req: http.IncomingMessage) =>
    new Promise<URLSearchParams>((resolve) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => resolve(new URLSearchParams(body)));
    });

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const [, provider, what] = url.pathname.split('/') as [string, FakeProvider, string];
    if (provider !== 'google' && provider !== 'microsoft') return json(res, 404, { error: 'not_found' });
    const client = clients[provider];
    if (what === 'authorize' && req.method === 'GET') {
      const q = url.searchParams;
      authorizeRequests.push(q);
      const redirect = q.get('redirect_uri') ?? '';
      if (q.get('client_id') !== client.id || !redirect) return json(res, 400, { error: 'invalid_client' });
      const back = new URL(redirect);
      back.searchParams.set('state', q.get('state') ?? '');
      if (deny) {
        deny = false;
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'The user denied access.');
      } else if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
        back.searchParams.set('error', 'invalid_request');
      } else {
        const code = `code-${b64url(randomBytes(16))}`;
        codes.set(code, {
          provider,
          clientId: client.id,
          redirectUri: redirect,
          challenge: q.get('code_challenge')!,
          scope: q.get('scope') ?? '',
          user: nextUser ?? q.get('login_hint') ?? 'someone@example.test',
        });
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (what === 'token' && req.method === 'POST') {
      const form = await readForm(req);
      const grantType = form.get('grant_type') ?? '';
      const record = (ok: boolean) => tokenRequests.push({ grant_type: grantType, provider, ok });
      if (form.get('client_id') !== client.id || form.get('client_secret') !== client.secret) {
        record(false);
        return json(res, 401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
      }
      if (grantType === 'authorization_code') {
        const pending = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (!pending || pending.redirectUri !== form.get('redirect_uri') || b64url(createHash('sha256').update(verifier).digest()) !== pending.challenge) {
          record(false);
          return json(res, 400, invalidGrant(provider));
        }
        record(true);
        return json(res, 200, issue({ provider, clientId: client.id, user: pending.user, scope: pending.scope, revoked: false }, true));
      }
      if (grantType === 'refresh_token') {
        const token = form.get('refresh_token') ?? '';
        const grant = refreshTokens.get(token);
        if (!grant || grant.revoked) {
          record(false);
          return json(res, 400, invalidGrant(provider));
        }
        record(true);
        // Microsoft hands out a new refresh token with every refresh (the old one keeps working for
        // a while); Google keeps the one it gave.
        return json(res, 200, issue(grant, provider === 'microsoft'));
      }
      record(false);
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (what === 'revoke' && req.method === 'POST') {
      const form = await readForm(req);
      const token = form.get('token') ?? '';
      const grant = refreshTokens.get(token) ?? accessTokens.get(token)?.grant;
      if (grant) grant.revoked = true;
      res.writeHead(200);
      return res.end();
    }
    if (what === 'introspect' && req.method === 'POST') {
      introspections++;
      const form = await readForm(req);
      const found = accessTokens.get(form.get('token') ?? '');
      if (!found || !found.live || found.grant.revoked) return json(res, 200, { active: false });
      return json(res, 200, { active: true, username: found.grant.user, scope: found.grant.scope, client_id: found.grant.clientId });
    }
    json(res, 404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    // Dovecot asks one introspection URL for both providers; the token says whose it is.
    introspectionUrl: `${url}/google/introspect`,
    signInAs(user) {
      nextUser = user;
    },
    denyNext() {
      deny = true;
    },
    revokeUser(user) {
      for (const grant of refreshTokens.values()) if (grant.user === user) grant.revoked = true;
    },
    accessTokenValid(user, token) {
      const found = accessTokens.get(token);
      return !!found && found.live && !found.grant.revoked && found.grant.user === user;
    },
    expireAccessTokens() {
      for (const t of accessTokens.values()) t.live = false;
    },
    tokenRequests,
    authorizeRequests,
    get introspections() {
      return introspections;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
