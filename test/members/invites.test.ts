import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { acceptInvite } from '../../src/members/invites.js';
import { createSession, findOrCreatePerson } from '../../src/people/service.js';
import { DAY, ManualClock } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const tokenOf = (url: string) => url.slice(url.indexOf('#') + 1);

describe('invites', () => {
  let sink: SmtpSink;
  let s: TestServer;
  let clock: ManualClock;
  let seed: Seed;
  before(async () => {
    sink = await startSmtpSink();
    clock = new ManualClock('2026-09-01T08:00:00Z');
    s = await startTestServer({
      clock,
      env: {
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(sink.port),
        SVC_SMTP_TLS: 'none',
        SVC_SMTP_FROM: 'svc@example.test',
        SVC_PUBLIC_URL: 'https://support.example.test',
      },
    });
    seed = await seedWorkspace(s.app, { name: 'Acme Support' });
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  async function invite(body: Record<string, unknown>, token = seed.ownerToken) {
    const before = sink.messages.length;
    const r = await s.request('POST', '/v1/invites', { token, body });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const [mail] = (await sink.waitFor(before + 1)).slice(before);
    return { r, mail };
  }

  test('an invite is mailed with a one-time link; listed without it; a new person accepts, gets an account and a session', async () => {
    const sales = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' });
    const { r, mail } = await invite({ email: 'New.Agent@Example.com', role: 'agent', inbox_ids: [sales.id] });
    assert.equal(r.body.email, 'new.agent@example.com');
    assert.equal(r.body.status, 'pending');
    assert.equal(r.body.mail_sent, true);
    assert.equal(r.body.sent_at, clock.now().toISOString());
    assert.equal(r.body.expires_at, new Date(clock.now().getTime() + 7 * DAY).toISOString());
    assert.match(r.body.url, /^https:\/\/support\.example\.test\/invite#svc_inv_/);
    assert.deepEqual(mail.to, ['new.agent@example.com']);
    assert.match(mail.parsed.subject!, /Acme Support/);
    assert.ok(mail.parsed.text!.includes(r.body.url), 'the mail carries the link');
    const token = tokenOf(r.body.url);

    const listed = await s.request('GET', '/v1/invites', { token: seed.ownerToken });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.data[0].id, r.body.id);
    assert.equal(listed.body.data[0].url, undefined);
    assert.ok(!JSON.stringify(listed.body).includes(token));
    const stored = await s.app.db.selectFrom('invites').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(stored).includes(token), 'only a hash is stored');
    assert.ok(!s.rawLogs.join('\n').includes(token), 'the token never reaches the log');

    // The invite page names the workspace and the role before anything is accepted (issue 43, item 13).
    const preview = await s.request('POST', '/v1/invites/preview', { body: { token } });
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.deepEqual(preview.body, { workspace_name: 'Acme Support', role: 'agent', email: 'new.agent@example.com' });
    assert.equal((await s.request('POST', '/v1/invites/preview', { body: { token: `${token}x` } })).status, 404);
    assert.equal((await s.request('POST', '/v1/invites/preview', { body: {} })).status, 400);

    const accepted = await s.request('POST', '/v1/invites/accept', { body: { token, name: 'Nia Agent' } });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.equal(accepted.body.workspace_id, seed.workspaceId);
    assert.equal(accepted.body.role, 'agent');
    assert.equal(accepted.body.person.name, 'Nia Agent');
    assert.match(accepted.body.token, /^svc_ses_/);
    const cookie = accepted.headers.get('set-cookie')!;
    assert.match(cookie, /svc_session=svc_ses_/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Secure/);
    const members = await s.request('GET', '/v1/members', { token: accepted.body.token });
    const me = members.body.data.find((m: { email: string }) => m.email === 'new.agent@example.com');
    assert.deepEqual(me.inbox_ids, [sales.id]);
    assert.deepEqual(
      (await s.request('GET', '/v1/inboxes', { token: accepted.body.token })).body.data.map((i: { id: string }) => i.id),
      [sales.id],
    );

    const again = await s.request('POST', '/v1/invites/accept', { body: { token } });
    assert.equal(again.status, 410);
    assert.equal(again.body.error.code, 'invite_used');
    assert.equal((await s.request('POST', '/v1/invites/preview', { body: { token } })).body.error.code, 'invite_used');
    assert.ok(!(await s.request('GET', '/v1/invites', { token: seed.ownerToken })).body.data.some((i: { id: string }) => i.id === r.body.id));
  });

  test('two people accepting one invite at once: one gets in', async () => {
    const { r } = await invite({ email: 'race@example.com', role: 'agent' });
    const token = tokenOf(r.body.url);
    // Below HTTP, so that the transactions really run at once.
    const results = await Promise.allSettled([1, 2, 3].map(() => acceptInvite(s.app, { token })));
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected', 'rejected']);
    // A late one may already see the new account (then it needs a sign-in); either way it is refused.
    for (const r of results) if (r.status === 'rejected') assert.ok(['invite_used', 'sign_in_required'].includes(r.reason.code), String(r.reason));
    const rows = await s.app.db
      .selectFrom('memberships')
      .innerJoin('people', 'people.id', 'memberships.person_id')
      .select('memberships.id')
      .where('people.email', '=', 'race@example.com')
      .execute();
    assert.equal(rows.length, 1);
  });

  test('invites work while sign-up is closed, and that stays as it is for everyone else', async () => {
    assert.equal(s.app.config.signup, 'closed');
    const { r } = await invite({ email: 'closed-signup@example.com', role: 'admin' });
    assert.equal((await s.request('POST', '/v1/invites/accept', { body: { token: tokenOf(r.body.url) } })).status, 200);
    const code = await s.request('POST', '/v1/auth/code', { body: { email: 'uninvited@example.com' } });
    assert.equal(code.status, 202);
    assert.equal(await s.app.db.selectFrom('people').select('id').where('email', '=', 'uninvited@example.com').executeTakeFirst(), undefined);
  });

  test('an existing person must be signed in as themselves to accept', async () => {
    const person = await findOrCreatePerson(s.app, { email: 'existing@example.com' });
    const { r } = await invite({ email: 'existing@example.com', role: 'agent' });
    const token = tokenOf(r.body.url);
    const anonymous = await s.request('POST', '/v1/invites/accept', { body: { token } });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error.code, 'sign_in_required');
    assert.equal(anonymous.headers.get('set-cookie'), null, 'no session for someone holding only the link');
    const stranger = await addPerson(s.app, (await seedWorkspace(s.app)).workspaceId, 'agent');
    const wrong = await s.request('POST', '/v1/invites/accept', { token: stranger.token, body: { token } });
    assert.equal(wrong.status, 409);
    assert.equal(wrong.body.error.code, 'invite_for_someone_else');
    const { token: session } = await createSession(s.app, person.id);
    const ok = await s.request('POST', '/v1/invites/accept', { token: session, body: { token } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.token, undefined, 'a signed-in person keeps their session');
    assert.equal((await s.request('GET', '/v1/workspace', { token: session, headers: { 'svc-workspace': seed.workspaceId } })).status, 200);
  });

  test('expired and revoked invites are refused with a clear error; resend makes a new link and the old one stops', async () => {
    const { r: expiring } = await invite({ email: 'slow@example.com', role: 'agent' });
    clock.advance(7 * DAY + 1000);
    const late = await s.request('POST', '/v1/invites/accept', { body: { token: tokenOf(expiring.body.url) } });
    assert.equal(late.status, 410);
    assert.equal(late.body.error.code, 'invite_expired');
    assert.equal(
      (await s.request('GET', '/v1/invites', { token: seed.ownerToken })).body.data.find((i: { id: string }) => i.id === expiring.body.id).status,
      'expired',
    );

    const before = sink.messages.length;
    const resent = await s.request('POST', `/v1/invites/${expiring.body.id}/resend`, { token: seed.ownerToken });
    assert.equal(resent.status, 200);
    assert.equal(resent.body.status, 'pending');
    assert.notEqual(resent.body.url, expiring.body.url);
    const [mail] = (await sink.waitFor(before + 1)).slice(before);
    assert.ok(mail.parsed.text!.includes(resent.body.url));
    assert.equal((await s.request('POST', '/v1/invites/accept', { body: { token: tokenOf(expiring.body.url) } })).status, 404, 'the replaced link is unknown');

    const revoked = await s.request('DELETE', `/v1/invites/${expiring.body.id}`, { token: seed.ownerToken });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.status, 'revoked');
    const refused = await s.request('POST', '/v1/invites/accept', { body: { token: tokenOf(resent.body.url) } });
    assert.equal(refused.status, 410);
    assert.equal(refused.body.error.code, 'invite_revoked');
    assert.equal(await s.app.db.selectFrom('people').select('id').where('email', '=', 'slow@example.com').executeTakeFirst(), undefined);
    assert.equal((await s.request('POST', '/v1/invites/accept', { body: { token: 'svc_inv_made_up' } })).status, 404);
  });

  test('who may invite: owners and admins; only owners invite owners; agents and keys never', async () => {
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await s.request('POST', '/v1/invites', { token: agent.token, body: { email: 'x1@example.com', role: 'agent' } })).status, 403);
    assert.equal((await s.request('GET', '/v1/invites', { token: agent.token })).status, 403);
    assert.equal((await s.request('POST', '/v1/invites', { token: seed.apiKey, body: { email: 'x2@example.com', role: 'agent' } })).status, 403);
    const adminOwner = await s.request('POST', '/v1/invites', { token: admin.token, body: { email: 'x3@example.com', role: 'owner' } });
    assert.equal(adminOwner.status, 403);
    const { r } = await invite({ email: 'x4@example.com', role: 'admin' }, admin.token);
    assert.equal(r.body.invited_by, admin.personId);
    const { r: ownerInvite } = await invite({ email: 'x5@example.com', role: 'owner' });
    assert.equal((await s.request('DELETE', `/v1/invites/${ownerInvite.body.id}`, { token: admin.token })).status, 403);
    assert.equal(
      await s.app.db.selectFrom('invites').select('id').where('email', 'in', ['x1@example.com', 'x2@example.com', 'x3@example.com']).executeTakeFirst(),
      undefined,
    );
  });

  test('bad input and duplicates are refused and change nothing', async () => {
    for (const body of [
      { email: 'nope', role: 'agent' },
      { email: 'a@example.com', role: 'boss' },
      { email: 'a@example.com' },
      { email: 'a@example.com', role: 'admin', inbox_ids: [seed.inboxId] },
      { email: 'a@example.com', role: 'agent', inbox_ids: ['inb_nope'] },
      { email: 'a@example.com', role: 'agent', x: 1 },
    ]) {
      const r = await s.request('POST', '/v1/invites', { token: seed.ownerToken, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    assert.equal(await s.app.db.selectFrom('invites').select('id').where('email', '=', 'a@example.com').executeTakeFirst(), undefined);
    const owner = await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow();
    const member = await s.request('POST', '/v1/invites', { token: seed.ownerToken, body: { email: owner.email, role: 'agent' } });
    assert.equal(member.status, 409);
    assert.equal(member.body.error.code, 'already_member');
    await invite({ email: 'twice@example.com', role: 'agent' });
    const twice = await s.request('POST', '/v1/invites', { token: seed.ownerToken, body: { email: 'twice@example.com', role: 'admin' } });
    assert.equal(twice.status, 409);
    assert.equal(twice.body.error.code, 'invite_pending');
    for (const body of [{}, { token: 5 }, { token: '' }]) assert.equal((await s.request('POST', '/v1/invites/accept', { body })).status, 400);
  });
});

describe('invites when the server cannot send mail', () => {
  for (const [name, env] of [
    ['no mail account', {}],
    ['the mail account fails', { SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: '1', SVC_SMTP_TLS: 'none' }],
  ] as const) {
    test(`${name}: "mail not sent" is logged and the answer carries the link to pass on by hand`, async () => {
      const s = await startTestServer({ env });
      try {
        const seed = await seedWorkspace(s.app);
        const r = await s.request('POST', '/v1/invites', { token: seed.ownerToken, body: { email: 'by-hand@example.com', role: 'agent' } });
        assert.equal(r.status, 201);
        assert.equal(r.body.mail_sent, false);
        assert.equal(r.body.sent_at, null);
        assert.match(r.body.url, /\/invite#svc_inv_/);
        const line = s.logs.find((l) => l.msg === 'mail not sent');
        assert.ok(line);
        assert.equal(line.purpose, 'invite');
        assert.ok(!s.rawLogs.join('\n').includes(tokenOf(r.body.url)));
        const accepted = await s.request('POST', '/v1/invites/accept', { body: { token: tokenOf(r.body.url) } });
        assert.equal(accepted.status, 200);
        assert.equal((await s.request('GET', '/v1/invites', { token: seed.ownerToken })).body.data.length, 0);
      } finally {
        await s.stop();
      }
    });
  }
});

describe('invites and sign-in links are not kept forever', () => {
  test('ended invites go 30 days after they ended, links a day after they were made; a deleted workspace’s invites go with it', async () => {
    const { runRetention } = await import('../../src/lifecycle/retention.js');
    const { createSignInLink } = await import('../../src/people/sign-in-links.js');
    const clock = new ManualClock('2026-09-01T08:00:00Z');
    const s = await startTestServer({ clock });
    try {
      const seed = await seedWorkspace(s.app);
      const make = async (email: string) => (await s.request('POST', '/v1/invites', { token: seed.ownerToken, body: { email, role: 'agent' } })).body;
      const accepted = await make('accepted@example.com');
      assert.equal((await s.request('POST', '/v1/invites/accept', { body: { token: tokenOf(accepted.url) } })).status, 200);
      const revoked = await make('revoked@example.com');
      await s.request('DELETE', `/v1/invites/${revoked.id}`, { token: seed.ownerToken });
      const expiring = await make('expiring@example.com');
      const link = await createSignInLink(s.app, seed.ownerId);
      clock.advance(7 * DAY);
      const pending = await make('pending@example.com');
      const ids = async () => (await s.app.db.selectFrom('invites').select('id').orderBy('id').execute()).map((r) => r.id);
      await runRetention(s.app);
      assert.deepEqual(await ids(), [accepted.id, revoked.id, expiring.id, pending.id].sort());
      assert.equal((await s.app.db.selectFrom('sign_in_links').select('id').execute()).length, 0, `link ${link.expiresAt} went after a day`);
      clock.advance(30 * DAY + 1000);
      await runRetention(s.app);
      assert.deepEqual(await ids(), [pending.id], 'the pending one expired 23 days ago and stays a week more');

      const other = await seedWorkspace(s.app);
      await s.request('POST', '/v1/invites', { token: other.ownerToken, body: { email: 'gone@example.com', role: 'agent' } });
      const workspace = await s.request('GET', '/v1/workspace', { token: other.ownerToken });
      assert.equal((await s.request('DELETE', '/v1/workspace', { token: other.ownerToken, body: { name: workspace.body.name } })).status, 202);
      // The deletion job's own run (the job itself is covered by the workspace deletion tests).
      const { runWorkspaceDeletion } = await import('../../src/lifecycle/workspace-deletion.js');
      for (let run = await runWorkspaceDeletion(s.app, other.workspaceId); run && !run.done; run = await runWorkspaceDeletion(s.app, other.workspaceId));
      assert.equal((await s.app.db.selectFrom('invites').select('id').where('workspace_id', '=', other.workspaceId).execute()).length, 0);
    } finally {
      await s.stop();
    }
  });
});
