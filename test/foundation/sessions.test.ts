import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { createSession, findOrCreatePerson } from '../../src/people/service.js';
import { createSignInLink } from '../../src/people/sign-in-links.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const EVIL = 'https://evil.example';

/** Opens /v1/realtime; resolves with the socket or the HTTP status it was refused with. */
function socket(s: TestServer, headers: Record<string, string>) {
  const ws = new WebSocket(s.url.replace('http', 'ws') + '/v1/realtime', { headers });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  return new Promise<{ ws: WebSocket; closed: Promise<number> } | { status: number }>((resolve, reject) => {
    ws.once('open', () => resolve({ ws, closed }));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode! }));
    ws.once('error', reject);
  });
}

describe('sessions and cookies', () => {
  let s: TestServer;
  let seed: Seed;
  before(async () => {
    s = await startTestServer({ env: { SVC_PUBLIC_URL: 'http://panel.example.test' } });
    seed = await seedWorkspace(s.app);
  });
  after(() => s.stop());

  test('a person lists their sessions, ends one (its socket closes at once), and signs out everywhere', async () => {
    const person = await findOrCreatePerson(s.app, { email: 'many-devices@example.com' });
    await s.app.db
      .insertInto('memberships')
      .values({ id: 'mem_sessions1', workspace_id: seed.workspaceId, person_id: person.id, role: 'agent', created_at: new Date().toISOString() })
      .execute();
    const laptop = await createSession(s.app, person.id, { userAgent: 'Laptop browser' });
    const phone = await createSession(s.app, person.id, { userAgent: 'Phone browser' });
    const tablet = await createSession(s.app, person.id);
    const list = await s.request('GET', '/v1/me/sessions', { token: laptop.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 3);
    const mine = list.body.data.find((x: { current: boolean }) => x.current);
    assert.equal(mine.user_agent, 'Laptop browser');
    assert.deepEqual(Object.keys(mine), ['id', 'created_at', 'last_used_at', 'expires_at', 'user_agent', 'current']);
    assert.ok(!JSON.stringify(list.body).includes(laptop.token.slice(8)), 'no token in the list');
    const phoneId = list.body.data.find((x: { user_agent: string | null }) => x.user_agent === 'Phone browser').id;

    const phoneSocket = await socket(s, { authorization: `Bearer ${phone.token}` });
    assert.ok('ws' in phoneSocket);
    assert.equal((await s.request('DELETE', `/v1/me/sessions/${phoneId}`, { token: laptop.token })).status, 200);
    assert.equal(await phoneSocket.closed, 4403);
    assert.equal((await s.request('GET', '/v1/me', { token: phone.token })).status, 401);
    assert.equal((await s.request('GET', '/v1/me', { token: laptop.token })).status, 200);
    // someone else's session is not yours to end
    const ownerSessions = await s.request('GET', '/v1/me/sessions', { token: seed.ownerToken });
    assert.equal((await s.request('DELETE', `/v1/me/sessions/${ownerSessions.body.data[0].id}`, { token: laptop.token })).status, 404);
    assert.equal((await s.request('GET', '/v1/me', { token: seed.ownerToken })).status, 200);
    assert.equal((await s.request('GET', '/v1/me/sessions', { token: seed.apiKey })).status, 403);

    const everywhere = await s.request('DELETE', '/v1/me/sessions', { token: tablet.token });
    assert.equal(everywhere.status, 200);
    assert.equal(everywhere.body.ended, 2);
    assert.match(everywhere.headers.get('set-cookie')!, /svc_session=;/);
    for (const t of [laptop.token, tablet.token]) assert.equal((await s.request('GET', '/v1/me', { token: t })).status, 401);
  });

  test('the session cookie is HttpOnly and SameSite=Lax, not Secure on an http public URL', async () => {
    const person = await findOrCreatePerson(s.app, { email: 'cookie@example.com' });
    const link = await createSignInLink(s.app, person.id);
    const r = await s.request('POST', '/v1/auth/link', { body: { token: link.token } });
    const cookie = r.headers.get('set-cookie')!;
    assert.match(cookie, /^svc_session=svc_ses_[^;]+; /);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Path=\//);
    assert.doesNotMatch(cookie, /Secure/);
  });

  test('cookie requests that change things must come from the server’s own origin; Bearer requests are unaffected', async () => {
    const cookie = `svc_session=${seed.ownerToken}`;
    const keys = async () => (await s.request('GET', '/v1/api-keys', { token: seed.ownerToken })).body.data.length;
    const before = await keys();
    const crossSite = await s.request('POST', '/v1/api-keys', { headers: { cookie, origin: EVIL }, body: { name: 'csrf' } });
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.body.error.code, 'forbidden');
    assert.match(crossSite.body.error.message, /cross-site/);
    for (const headers of [
      { cookie, origin: 'null' },
      { cookie, 'sec-fetch-site': 'cross-site' },
      { cookie, 'sec-fetch-site': 'same-site' },
    ] as Record<string, string>[]) {
      assert.equal((await s.request('POST', '/v1/api-keys', { headers, body: { name: 'csrf' } })).status, 403, JSON.stringify(headers));
    }
    assert.equal((await s.request('DELETE', '/v1/workspace', { headers: { cookie, origin: EVIL }, body: { name: 'x' } })).status, 403);
    assert.equal(await keys(), before, 'nothing was made');

    assert.equal((await s.request('GET', '/v1/api-keys', { headers: { cookie, origin: EVIL } })).status, 200, 'reading is not a change');
    assert.equal((await s.request('POST', '/v1/api-keys', { headers: { cookie, origin: 'http://panel.example.test' }, body: { name: 'panel' } })).status, 201);
    assert.equal(
      (await s.request('POST', '/v1/api-keys', { headers: { cookie, origin: s.url }, body: { name: 'host-origin' } })).status,
      201,
      'the Host’s own origin passes too',
    );
    assert.equal(
      (await s.request('POST', '/v1/api-keys', { headers: { cookie, 'sec-fetch-site': 'same-origin' }, body: { name: 'fetch-metadata' } })).status,
      201,
    );
    assert.equal((await s.request('POST', '/v1/api-keys', { token: seed.ownerToken, headers: { origin: EVIL }, body: { name: 'bearer' } })).status, 201);
    assert.equal(
      (await s.request('POST', '/v1/api-keys', { token: seed.ownerToken, headers: { origin: EVIL, cookie }, body: { name: 'bearer-and-cookie' } })).status,
      201,
    );
    assert.equal(await keys(), before + 5);

    // signing in from another site is refused too (no login CSRF)
    const person = await findOrCreatePerson(s.app, { email: 'login-csrf@example.com' });
    const link = await createSignInLink(s.app, person.id);
    assert.equal((await s.request('POST', '/v1/auth/link', { headers: { origin: EVIL }, body: { token: link.token } })).status, 403);
    assert.equal((await s.request('POST', '/v1/auth/link', { headers: { origin: 'http://panel.example.test' }, body: { token: link.token } })).status, 200);
  });

  test('the realtime upgrade with the cookie checks Origin; with a key it does not', async () => {
    const cookie = `svc_session=${seed.ownerToken}`;
    const refused = await socket(s, { cookie, origin: EVIL });
    assert.deepEqual(refused, { status: 403 });
    const own = await socket(s, { cookie, origin: 'http://panel.example.test' });
    assert.ok('ws' in own);
    own.ws.close();
    const key = await socket(s, { authorization: `Bearer ${seed.apiKey}`, origin: EVIL });
    assert.ok('ws' in key);
    key.ws.close();
  });
});
