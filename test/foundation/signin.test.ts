import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findOrCreatePerson } from '../../src/people/service.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const codeOf = (subject: string | undefined) => /(\d{6})/.exec(subject ?? '')![1];

describe('sign-in with mailed codes', () => {
  let sink: SmtpSink;
  let s: TestServer;
  let clock: ManualClock;
  before(async () => {
    sink = await startSmtpSink();
    clock = new ManualClock('2026-03-01T10:00:00Z');
    s = await startTestServer({
      clock,
      env: { SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(sink.port), SVC_SMTP_TLS: 'none', SVC_SMTP_FROM: 'Acme Support <svc@example.test>' },
    });
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  async function signIn(email: string) {
    const before = sink.messages.length;
    const r = await s.request('POST', '/v1/auth/code', { body: { email } });
    assert.equal(r.status, 202);
    const [mail] = (await sink.waitFor(before + 1)).slice(before);
    assert.deepEqual(mail.to, [email]);
    // SVC_SMTP_FROM with a display name: the mail shows it (issue 43 item 13).
    assert.deepEqual(mail.parsed.from?.value, [{ name: 'Acme Support', address: 'svc@example.test' }]);
    // The job that mailed it ends before the test moves the clock (a lease passed by would run it again).
    await s.app.jobs.drain();
    return codeOf(mail.parsed.subject);
  }

  test('a member receives a code, exchanges it for a session, and uses it as Bearer and cookie', async () => {
    const seed = await seedWorkspace(s.app);
    const email = 'ada@example.com';
    const person = await findOrCreatePerson(s.app, { email });
    await s.app.db
      .insertInto('memberships')
      .values({ id: 'mem_x1', workspace_id: seed.workspaceId, person_id: person.id, role: 'agent', created_at: new Date().toISOString() })
      .execute();
    const code = await signIn(email);
    assert.ok(!s.rawLogs.join('').includes(code), 'the code never reaches the log');
    const v = await s.request('POST', '/v1/auth/verify', { body: { email, code } });
    assert.equal(v.status, 200);
    assert.match(v.body.token, /^svc_ses_/);
    assert.equal(v.body.person.email, email);
    assert.deepEqual(
      v.body.memberships.map((m: { role: string }) => m.role),
      ['agent'],
    );
    const cookie = v.headers.get('set-cookie')!;
    assert.match(cookie, /svc_session=svc_ses_/);
    assert.match(cookie, /HttpOnly/);
    const me = await s.request('GET', '/v1/me', { token: v.body.token });
    assert.equal(me.body.person.email, email);
    const ws = await s.request('GET', '/v1/workspace', { headers: { cookie: cookie.split(';')[0] } });
    assert.equal(ws.status, 200);
    assert.equal(ws.body.id, seed.workspaceId);
    // single use
    const again = await s.request('POST', '/v1/auth/verify', { body: { email, code } });
    assert.equal(again.status, 401);
    // sign out ends the session
    assert.equal((await s.request('POST', '/v1/auth/signout', { token: v.body.token })).status, 204);
    assert.equal((await s.request('GET', '/v1/me', { token: v.body.token })).status, 401);
  });

  test('codes expire after 10 minutes', async () => {
    const email = 'late@example.com';
    await findOrCreatePerson(s.app, { email });
    const code = await signIn(email);
    clock.advance(10 * MINUTE + 1000);
    const v = await s.request('POST', '/v1/auth/verify', { body: { email, code } });
    assert.equal(v.status, 401);
    assert.equal(v.body.error.code, 'unauthorized');
  });

  test('five wrong guesses burn the code', async () => {
    const email = 'guess@example.com';
    await findOrCreatePerson(s.app, { email });
    const code = await signIn(email);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) assert.equal((await s.request('POST', '/v1/auth/verify', { body: { email, code: wrong } })).status, 401);
    assert.equal((await s.request('POST', '/v1/auth/verify', { body: { email, code } })).status, 401);
  });

  test('an unknown address gets the same answer and no mail; no account is made while sign-up is closed', async () => {
    const before = sink.messages.length;
    const r = await s.request('POST', '/v1/auth/code', { body: { email: 'stranger@example.com' } });
    assert.equal(r.status, 202);
    assert.deepEqual(r.body, { status: 'sent' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(sink.messages.length, before);
    const v = await s.request('POST', '/v1/auth/verify', { body: { email: 'stranger@example.com', code: '123456' } });
    assert.equal(v.status, 401);
    const person = await s.app.db.selectFrom('people').select('id').where('email', '=', 'stranger@example.com').executeTakeFirst();
    assert.equal(person, undefined);
  });

  test('codes are rate limited per address (429 with Retry-After)', async () => {
    const email = 'busy@example.com';
    await findOrCreatePerson(s.app, { email });
    for (let i = 0; i < 5; i++) assert.equal((await s.request('POST', '/v1/auth/code', { body: { email } })).status, 202);
    const r = await s.request('POST', '/v1/auth/code', { body: { email } });
    assert.equal(r.status, 429);
    assert.equal(r.body.error.code, 'rate_limited');
    assert.ok(Number(r.headers.get('retry-after')) > 0);
    clock.advance(61 * MINUTE);
    assert.equal((await s.request('POST', '/v1/auth/code', { body: { email } })).status, 202);
  });

  test('bad input is refused', async () => {
    assert.equal((await s.request('POST', '/v1/auth/code', { body: { email: 'nope' } })).status, 400);
    assert.equal((await s.request('POST', '/v1/auth/code', { body: { email: 42 } })).status, 400);
    assert.equal((await s.request('POST', '/v1/auth/code', { raw: '{"email":', headers: { 'content-type': 'application/json' } })).status, 400);
  });
});

describe('sign-in when the server’s SMTP account fails', () => {
  test('the answer stays 202 and the log says "mail not sent"', async () => {
    const sink = await startSmtpSink();
    const port = sink.port;
    await sink.close(); // nothing listens there any more
    const s = await startTestServer({ env: { SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(port), SVC_SMTP_TLS: 'none' } });
    try {
      await findOrCreatePerson(s.app, { email: 'x@example.com' });
      const r = await s.request('POST', '/v1/auth/code', { body: { email: 'x@example.com' } });
      assert.equal(r.status, 202);
      // The code is mailed by a job after the answer.
      await s.app.jobs.drain();
      const line = s.logs.find((l) => l.msg === 'mail not sent');
      assert.ok(line);
      assert.equal(line.level, 'error');
    } finally {
      await s.stop();
    }
  });
});

describe('open sign-up', () => {
  test('a new person signs in and creates a workspace they own', async () => {
    const sink = await startSmtpSink();
    const s = await startTestServer({ env: { SVC_SIGNUP: 'open', SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(sink.port), SVC_SMTP_TLS: 'none' } });
    try {
      const email = 'founder@example.com';
      await s.request('POST', '/v1/auth/code', { body: { email } });
      const [mail] = await sink.waitFor(1);
      const v = await s.request('POST', '/v1/auth/verify', { body: { email, code: codeOf(mail.parsed.subject) } });
      assert.equal(v.status, 200);
      assert.deepEqual(v.body.memberships, []);
      const w = await s.request('POST', '/v1/workspaces', { token: v.body.token, body: { name: 'Founder Co' } });
      assert.equal(w.status, 201);
      const row = await s.app.db.selectFrom('workspaces').select(['origin']).where('id', '=', w.body.id).executeTakeFirstOrThrow();
      assert.equal(row.origin, 'signup');
      const me = await s.request('GET', '/v1/me', { token: v.body.token });
      assert.deepEqual(
        me.body.memberships.map((m: { role: string }) => m.role),
        ['owner'],
      );
    } finally {
      await s.stop();
      await sink.close();
    }
  });

  test('with sign-up closed, POST /v1/workspaces is refused', async () => {
    const s = await startTestServer();
    try {
      const seed = await seedWorkspace(s.app);
      const r = await s.request('POST', '/v1/workspaces', { token: seed.ownerToken, body: { name: 'Another' } });
      assert.equal(r.status, 403);
    } finally {
      await s.stop();
    }
  });
});
