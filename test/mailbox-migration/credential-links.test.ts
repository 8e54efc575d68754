// Credentials links below the happy path (which test/mcp/move-to-service.test.ts walks with Dovecot):
// who may ask for one, what a link is bound to, expiry, a newer link ending the older one, a
// creator who lost the right, the answer for unknown tokens, and retention of expired rows. And the
// channel rule: with only an inbox named, its e-mail channel for the address is taken or one is made.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey, revokeApiKey } from '../../src/api-keys/service.js';
import { memberAccess } from '../../src/auth/access.js';
import { createEmailChannel } from '../../src/channels/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { runRetention } from '../../src/lifecycle/retention.js';
import { CREDENTIALS_LINK_KEEP_MS } from '../../src/mailbox-migration/lifecycle.js';
import { CREDENTIALS_LINK_TTL_MS, createCredentialsLink } from '../../src/mailbox-migration/sources/credential-links.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('migration credentials links', () => {
  let s: TestServer;
  let seed: Seed;
  const clock = new ManualClock(new Date('2026-11-24T10:00:00Z'));
  const imap = { host: 'imap.acme.test', port: 993, tls: 'tls' };
  const create = async (token: string, body: Record<string, unknown>) =>
    s.request('POST', '/v1/migrations', { token, body: { provider: 'imap', imap, ...body } });
  const linkFor = async (token: string, id: string) => s.request('POST', `/v1/migrations/${id}/credentials-link`, { token });
  const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, '');
  const check = (id: string, token: string) => s.request('POST', `/v1/migration-links/${id}/check`, { body: { token } });

  before(async () => {
    s = await startTestServer({ clock });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
  });
  after(async () => {
    await s?.stop();
  });

  test('a link says which mailbox it is for; it is bound to its migration and expires after 30 minutes', async () => {
    const m = (await create(seed.apiKey, { source_address: 'help@acme.test' })).body;
    const other = (await create(seed.apiKey, { source_address: 'sales@acme.test' })).body;
    const made = await linkFor(seed.apiKey, m.id);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.mailbox, 'help@acme.test');
    assert.equal(new URL(made.body.url).origin, s.url, 'without SVC_PUBLIC_URL: the address the caller reached');
    const configured = { ...s.app, config: { ...s.app.config, publicUrl: 'https://support.example.com', publicUrlConfigured: true } };
    const named = await createCredentialsLink(configured, memberAccess(seed.workspaceId, seed.ownerId, 'owner', 'ses'), m.id, s.url);
    assert.match(named.url, new RegExp(`^https://support\\.example\\.com/migrations/${m.id}/connect#token=svc_mcl_`));
    const made2 = await linkFor(seed.apiKey, m.id);
    const token = tokenOf(made2.body.url);
    assert.equal((await check(m.id, tokenOf(made.body.url))).status, 404, 'a newer link ended it');
    const ok = await check(m.id, token);
    assert.equal(ok.status, 200);
    assert.deepEqual(
      { mailbox: ok.body.mailbox, username: ok.body.username, provider: ok.body.provider_name },
      { mailbox: 'help@acme.test', username: 'help@acme.test', provider: 'Other IMAP server' },
    );
    const elsewhere = await check(other.id, token);
    assert.equal(elsewhere.status, 404, 'not for another migration');
    const elsewherePut = await s.request('PUT', `/v1/migration-links/${other.id}/credentials`, { body: { token, password: 'secret-1' } });
    assert.equal(elsewherePut.status, 404);
    assert.equal(
      (await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('id', '=', other.id).executeTakeFirstOrThrow()).password_sealed,
      null,
      'nothing stored',
    );
    for (const bad of ['', 'svc_mcl_nope', 'x'.repeat(201)]) {
      const r = await check(m.id, bad);
      assert.ok(r.status === 404 || r.status === 400, `${bad.slice(0, 10)}: ${r.status}`);
      assert.ok(r.body.error.code);
    }
    clock.advance(CREDENTIALS_LINK_TTL_MS);
    const late = await check(m.id, token);
    assert.equal(late.status, 404);
    assert.match(late.body.error.message, /unknown, used or expired/);
    const latePut = await s.request('PUT', `/v1/migration-links/${m.id}/credentials`, { body: { token, password: 'secret-1' } });
    assert.equal(latePut.status, 404);
    assert.equal((await s.request('GET', `/v1/migrations/${m.id}`, { token: seed.apiKey })).body.credentials.set, false);
  });

  test('a new link ends the earlier one; a revoked key’s links stop working; members may make links too', async () => {
    const m = (await create(seed.apiKey, { source_address: 'desk@acme.test' })).body;
    const first = tokenOf((await linkFor(seed.apiKey, m.id)).body.url);
    const second = tokenOf((await linkFor(seed.apiKey, m.id)).body.url);
    assert.equal((await check(m.id, first)).status, 404);
    assert.equal((await check(m.id, second)).status, 200);

    const key = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'assistant', scopes: ['migrations:manage'] });
    const byKey = tokenOf((await linkFor(key.secret, m.id)).body.url);
    assert.equal((await check(m.id, byKey)).status, 200);
    await revokeApiKey(s.app, key.key.id);
    const revoked = await check(m.id, byKey);
    assert.equal(revoked.status, 403);
    assert.match(revoked.body.error.message, /may no longer manage migrations/);

    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const byAdmin = tokenOf((await linkFor(admin.token, m.id)).body.url);
    assert.equal((await check(m.id, byAdmin)).status, 200);
    await s.app.db.updateTable('memberships').set({ role: 'agent' }).where('person_id', '=', admin.personId).execute();
    assert.equal((await check(m.id, byAdmin)).status, 403, 'a member who is no longer an admin');
  });

  test('who may ask: not agents, not keys without migrations:manage or with an inbox limit; not for an export file', async () => {
    const m = (await create(seed.apiKey, { source_address: 'who@acme.test' })).body;
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await linkFor(agent.token, m.id)).status, 403);
    const narrow = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'narrow', scopes: ['conversations:read'] });
    assert.equal((await linkFor(narrow.secret, m.id)).status, 403);
    const limited = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'limited', scopes: ['migrations:manage'], inboxIds: [seed.inboxId] });
    assert.equal((await linkFor(limited.secret, m.id)).status, 403);
    const file = (await s.request('POST', '/v1/migrations', { token: seed.apiKey, body: { provider: 'export_file' } })).body;
    const refused = await linkFor(seed.apiKey, file.id);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'migration_state');
    const count = await s.app.db.selectFrom('migration_credential_links').select('id').where('migration_id', 'in', [m.id, file.id]).execute();
    assert.equal(count.length, 0);
  });

  test('retention removes links a day after they expired', async () => {
    const m = (await create(seed.apiKey, { source_address: 'keep@acme.test' })).body;
    await linkFor(seed.apiKey, m.id);
    const rows = () => s.app.db.selectFrom('migration_credential_links').select('id').where('migration_id', '=', m.id).execute();
    assert.equal((await rows()).length, 1);
    clock.advance(CREDENTIALS_LINK_TTL_MS + CREDENTIALS_LINK_KEEP_MS - MINUTE);
    await runRetention(s.app);
    assert.equal((await rows()).length, 1, 'kept a day after expiry');
    clock.advance(2 * MINUTE);
    const report = await runRetention(s.app);
    assert.equal((await rows()).length, 0);
    assert.ok(JSON.stringify(report).includes('migration_credential_links'));
  });

  test('channel rule: the inbox’s e-mail channel for the address is taken, else one is made without SMTP; a taken address changes nothing', async () => {
    const inbox = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Rule' });
    const otherAddress = await createEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: inbox.id, name: 'Other', address: 'other@acme.test' });
    const forAddress = await createEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: inbox.id, name: 'Help', address: 'rule@acme.test' });
    const existing = await create(seed.apiKey, { source_address: 'rule@acme.test', inbox_id: inbox.id });
    assert.equal(existing.status, 201, JSON.stringify(existing.body));
    assert.equal(existing.body.channel_id, forAddress.id, 'the channel for the address, not the first one');
    assert.equal(existing.body.created_channel, undefined);
    assert.notEqual(existing.body.channel_id, otherAddress.id);

    const made = await create(seed.apiKey, { source_address: 'fresh@acme.test', inbox_id: inbox.id });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.created_channel.address, 'fresh@acme.test');
    assert.equal(made.body.created_channel.smtp_configured, false);
    assert.match(made.body.created_channel.message, /before replies can be sent/);
    const listed = await s.request('GET', `/v1/channels?inbox_id=${inbox.id}`, { token: seed.apiKey });
    const channel = listed.body.data.find((c: { id: string }) => c.id === made.body.channel_id);
    assert.equal(channel.address, 'fresh@acme.test');
    assert.equal(channel.smtp, null);
    const log = await s.request('GET', `/v1/migrations/${made.body.id}/activity`, { token: seed.apiKey });
    assert.ok(
      log.body.data.some(
        (l: { action: string; detail: { channel_id: string } }) => l.action === 'channel_created' && l.detail.channel_id === made.body.channel_id,
      ),
    );

    // Update: naming only an inbox again takes its channel for the address or makes one.
    const draft = (await create(seed.apiKey, { source_address: 'later@acme.test' })).body;
    assert.equal(draft.channel_id, null);
    const moved = await s.request('PATCH', `/v1/migrations/${draft.id}`, { token: seed.apiKey, body: { inbox_id: inbox.id } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(moved.body.created_channel.address, 'later@acme.test');
    assert.equal(moved.body.channel_id, moved.body.created_channel.id);

    // The address belongs to a channel of another inbox: refused, and neither migration nor channel is made.
    const migrationsBefore = (await s.app.db.selectFrom('mailbox_migrations').select('id').execute()).length;
    const channelsBefore = (await s.app.db.selectFrom('channels').select('id').execute()).length;
    const taken = await create(seed.apiKey, { source_address: 'rule@acme.test', inbox_id: seed.inboxId });
    assert.equal(taken.status, 409, JSON.stringify(taken.body));
    assert.equal((await s.app.db.selectFrom('mailbox_migrations').select('id').execute()).length, migrationsBefore);
    assert.equal((await s.app.db.selectFrom('channels').select('id').execute()).length, channelsBefore);
  });
});
