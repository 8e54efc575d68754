import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findOrCreatePerson } from '../../src/people/service.js';
import { createSignInLink } from '../../src/people/sign-in-links.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { type ChildServer, runSvc, spawnServer, startTestServer, type TestEnv, testEnv } from '../helpers/server.js';

const PUBLIC_URL = 'http://panel.example.test:8080';
const tokenOf = (url: string) => url.slice(url.indexOf('#') + 1);

async function call(base: string, method: string, path: string, opts: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

describe('the first sign-in on a fresh install (no mail account)', () => {
  let te: TestEnv;
  let server: ChildServer;
  before(async () => {
    te = await testEnv({ SVC_PUBLIC_URL: PUBLIC_URL });
    server = await spawnServer(te.env);
  });
  after(async () => {
    await server.kill();
    await te.cleanup();
  });

  test('svc bootstrap prints a one-time sign-in link on stderr (stdout keeps only the id), and the link signs the owner in once', async () => {
    const r = await runSvc(['bootstrap', '--email', 'first@example.com', '--workspace', 'Fresh'], { env: te.env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ws_[0-9a-z]{26}\n$/);
    const workspaceId = r.stdout.trim();
    const link = /(\S+\/sign-in\/link#svc_link_\S+)/.exec(r.stderr)?.[1];
    assert.ok(link, r.stderr);
    assert.ok(link.startsWith(`${PUBLIC_URL}/sign-in/link#`));
    assert.match(r.stderr, /SVC_SMTP_HOST is not set/);

    // what a new user tries first: a code by mail, which this server cannot send; it says so
    const code = await call(server.url, 'POST', '/v1/auth/code', { body: { email: 'first@example.com' } });
    assert.equal(code.status, 409);
    assert.equal(code.body.error.code, 'mail_not_configured');
    assert.match(code.body.error.message, /sign-in link/);
    const methods = await call(server.url, 'GET', '/v1/auth/methods');
    assert.equal(methods.body.email_code, false);
    assert.match(methods.body.message, /operator/);

    const signedIn = await call(server.url, 'POST', '/v1/auth/link', { body: { token: tokenOf(link) } });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.person.email, 'first@example.com');
    assert.deepEqual(signedIn.body.memberships, [
      { workspace_id: workspaceId, workspace_name: 'Fresh', role: 'owner', member_id: signedIn.body.memberships[0].member_id },
    ]);
    assert.match(signedIn.body.memberships[0].member_id, /^mem_/);
    assert.match(signedIn.headers.get('set-cookie')!, /svc_session=svc_ses_.*HttpOnly/);
    const ws = await call(server.url, 'GET', '/v1/workspace', { token: signedIn.body.token });
    assert.equal(ws.body.id, workspaceId);

    const reused = await call(server.url, 'POST', '/v1/auth/link', { body: { token: tokenOf(link) } });
    assert.equal(reused.status, 401);
    assert.equal(reused.body.error.code, 'unauthorized');
    assert.ok(!server.stderrLines.join('\n').includes(tokenOf(link)), 'the link never reaches the server log');
  });

  test('svc person sign-in-link prints a link on stdout for any person; unknown people are refused', async () => {
    const r = await runSvc(['person', 'sign-in-link', '--email', 'First@Example.com'], { env: te.env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^http:\/\/panel\.example\.test:8080\/sign-in\/link#svc_link_[A-Za-z0-9_-]+\n$/);
    assert.match(r.stderr, /15 minutes/);
    const ok = await call(server.url, 'POST', '/v1/auth/link', { body: { token: tokenOf(r.stdout.trim()) } });
    assert.equal(ok.status, 200);
    const stored = await runSvc(['person', 'sign-in-link', '--email', 'nobody@example.com'], { env: te.env });
    assert.equal(stored.code, 1);
    assert.equal(stored.stdout, '');
    assert.match(stored.stderr, /not found/);
    for (const body of [{}, { token: 'svc_link_wrong' }, { token: 'other' }]) {
      const bad = await call(server.url, 'POST', '/v1/auth/link', { body });
      assert.ok(bad.status === 400 || bad.status === 401, JSON.stringify(bad.body));
    }
  });
});

describe('sign-in links', () => {
  test('expire after 15 minutes; only a hash is stored', async () => {
    const clock = new ManualClock('2026-09-01T08:00:00Z');
    const s = await startTestServer({ clock });
    try {
      const person = await findOrCreatePerson(s.app, { email: 'later@example.com' });
      const link = await createSignInLink(s.app, person.id);
      const rows = await s.app.db.selectFrom('sign_in_links').selectAll().execute();
      assert.ok(!JSON.stringify(rows).includes(link.token));
      clock.advance(15 * MINUTE);
      const r = await s.request('POST', '/v1/auth/link', { body: { token: link.token } });
      assert.equal(r.status, 401);
      const fresh = await createSignInLink(s.app, person.id);
      clock.advance(14 * MINUTE);
      assert.equal((await s.request('POST', '/v1/auth/link', { body: { token: fresh.token } })).status, 200);
    } finally {
      await s.stop();
    }
  });
});
