// Credentials links for help desks: the link's page says it is for a help desk, and the link's PUT
// takes the help desk's API credentials (Zendesk: subdomain, email, api_token; Help Scout: app_id,
// app_secret) with the checks and sealing of PUT /v1/migrations/{id}/credentials, tested at once
// against loopback fakes; bad input is a 400 that stores nothing and leaves the link usable.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { FakeHelpScout, FakeZendesk } from '../helpers/helpdesk-fakes.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('credentials links for help desks', () => {
  let s: TestServer;
  let seed: Seed;
  let channelId: string;
  const zendesk = new FakeZendesk();
  const helpScout = new FakeHelpScout();
  const clock = new ManualClock(new Date());

  before(async () => {
    await zendesk.start();
    await helpScout.start();
    zendesk.users = [{ id: 4, name: 'Admin', email: 'agent@acme.test', role: 'admin' }];
    s = await startTestServer({
      clock,
      env: { SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_MIGRATION_ZENDESK_URL: zendesk.url, SVC_MIGRATION_HELPSCOUT_URL: helpScout.url },
    });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    channelId = (await seedEmailChannel(s.app, seed, { address: 'help@acme.test' })).id;
  });
  after(async () => {
    await s?.stop();
    await zendesk.stop();
    await helpScout.stop();
  });

  const api = (method: string, p: string, body?: unknown) => s.request(method, p, { token: seed.apiKey, body });
  const linkPut = (id: string, body: Record<string, unknown>) => s.request('PUT', `/v1/migration-links/${id}/credentials`, { body });
  const sealedOf = async (id: string) =>
    await s.app.db.selectFrom('mailbox_migrations').select(['password_sealed', 'username']).where('id', '=', id).executeTakeFirstOrThrow();
  async function draftWithLink(provider: string) {
    const created = await api('POST', '/v1/migrations', { provider, inbox_id: seed.inboxId, channel_id: channelId });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const link = await api('POST', `/v1/migrations/${created.body.id}/credentials-link`);
    assert.equal(link.status, 201, JSON.stringify(link.body));
    return { id: created.body.id as string, token: new URL(link.body.url).hash.replace(/^#token=/, '') };
  }

  test('Zendesk: the page is told it is a help desk; bad input stores nothing; a wrong token fails the test; the right one connects', async () => {
    const { id, token } = await draftWithLink('zendesk');
    const check = await s.request('POST', `/v1/migration-links/${id}/check`, { body: { token } });
    assert.equal(check.status, 200, JSON.stringify(check.body));
    assert.deepEqual(
      { kind: check.body.kind, provider: check.body.provider, name: check.body.provider_name },
      { kind: 'help_desk', provider: 'zendesk', name: 'Zendesk' },
    );

    for (const [body, field] of [
      [{ subdomain: 'acme', email: 'agent@acme.test' }, /api_token/],
      [{ password: 'just-a-password' }, /subdomain/],
      [{ subdomain: 'not a name!', email: 'agent@acme.test', api_token: zendesk.token }, /subdomain/],
      [{ subdomain: 'acme', email: 'not-an-address', api_token: zendesk.token }, /email/],
    ] as const) {
      const r = await linkPut(id, { token, ...body });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, field);
      assert.equal((await sealedOf(id)).password_sealed, null, 'nothing stored');
    }
    const unknownField = await linkPut(id, { token, subdomain: 'acme', email: 'agent@acme.test', api_token: zendesk.token, extra: 1 });
    assert.equal(unknownField.status, 400);

    const wrong = await linkPut(id, { token, subdomain: 'acme', email: 'agent@acme.test', api_token: 'wrong-token-value' });
    assert.equal(wrong.status, 200, JSON.stringify(wrong.body));
    assert.equal(wrong.body.connected, false);
    assert.equal(wrong.body.test.failed_step, 'login');
    assert.equal((await s.request('POST', `/v1/migration-links/${id}/check`, { body: { token } })).status, 200, 'a failed test leaves the link usable');

    const testsBefore = zendesk.requests.length;
    const ok = await linkPut(id, { token, subdomain: 'https://acme.zendesk.com', email: 'agent@acme.test', api_token: zendesk.token });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.connected, true, JSON.stringify(ok.body.test));
    assert.equal(ok.body.state, 'connected');
    assert.ok(
      ok.body.test.steps.some((x: { step: string }) => x.step === 'permission'),
      'the help desk’s own test steps',
    );
    const meCalls = zendesk.requests.slice(testsBefore).filter((r) => r.path.includes('/users/me')).length;
    assert.equal(meCalls, 1, 'tested once, as PUT …/credentials does');
    assert.ok(!JSON.stringify(ok.body).includes(zendesk.token), 'the token is never shown');

    const row = await sealedOf(id);
    assert.equal(row.username, 'agent@acme.test');
    assert.ok(row.password_sealed && !row.password_sealed.includes(zendesk.token), 'sealed under the master key');
    const account = await s.app.db.selectFrom('migration_helpdesk_sources').select('account').where('migration_id', '=', id).executeTakeFirstOrThrow();
    assert.equal(account.account, 'acme');
    const activity = await api('GET', `/v1/migrations/${id}/activity?limit=50`);
    const set = activity.body.data.filter((a: { action: string }) => a.action === 'credentials_set' || a.action === 'credentials_replaced');
    assert.ok(set.length >= 1 && set.every((a: { detail: { via?: string } }) => a.detail.via === 'link'), JSON.stringify(set));
    assert.equal((await s.request('POST', `/v1/migration-links/${id}/check`, { body: { token } })).status, 404, 'used up');
    assert.ok(!s.rawLogs.some((l) => l.includes(zendesk.token)), 'the token never reaches the log');
  });

  test('Help Scout: App ID and App Secret through the link connect', async () => {
    const { id, token } = await draftWithLink('help_scout');
    const missing = await linkPut(id, { token, app_id: helpScout.appId });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /app_secret/);
    const ok = await linkPut(id, { token, app_id: helpScout.appId, app_secret: helpScout.appSecret });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.connected, true, JSON.stringify(ok.body.test));
    assert.equal(ok.body.state, 'connected');
    assert.equal((await api('GET', `/v1/migrations/${id}`)).body.credentials.set, true);
    assert.ok(!JSON.stringify(ok.body).includes(helpScout.appSecret));
  });

  test('a mailbox’s link still takes only a password', async () => {
    const created = await api('POST', '/v1/migrations', { provider: 'imap', imap: { host: 'imap.acme.test' }, source_address: 'help@acme.test' });
    const link = await api('POST', `/v1/migrations/${created.body.id}/credentials-link`);
    const token = new URL(link.body.url).hash.replace(/^#token=/, '');
    const check = await s.request('POST', `/v1/migration-links/${created.body.id}/check`, { body: { token } });
    assert.equal(check.body.kind, 'mailbox');
    const noPassword = await linkPut(created.body.id, { token, app_id: 'x', app_secret: 'y' });
    assert.equal(noPassword.status, 400);
    assert.match(noPassword.body.error.message, /password/);
  });
});
