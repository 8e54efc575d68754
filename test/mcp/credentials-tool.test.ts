// migration_credentials_link beyond a mailbox password, with the SDK's MCP client: a help desk is
// connected through the link (its API credentials typed by the person, never passed through a
// tool), and for a sign-in provider the tool answers the migration's sign-in address, which the
// mailbox's owner opens in a browser with no session (the sign-in was started with the API key).
// The prompt tells the assistant both.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { FakeZendesk } from '../helpers/helpdesk-fakes.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { type OAuthFake, startOAuthFake } from '../helpers/oauth-fake.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signIn } from '../helpers/sign-in.js';
import { connectMcp, type McpSession } from './helpers.js';

const CLIENTS = { google: { id: 'google-client.apps.test', secret: 'google-secret-xyz' }, microsoft: { id: 'ms-client-0001', secret: 'ms-secret-xyz' } };

describe('MCP: connecting help desks and sign-in providers', () => {
  let s: TestServer;
  let seed: Seed;
  let mcp: McpSession;
  let fake: OAuthFake;
  const zendesk = new FakeZendesk();
  const clock = new ManualClock(new Date());

  before(async () => {
    fake = await startOAuthFake(CLIENTS);
    await zendesk.start();
    zendesk.users = [{ id: 4, name: 'Admin', email: 'agent@acme.test', role: 'admin' }];
    s = await startTestServer({
      clock,
      env: {
        SVC_MIGRATION_ALLOW_PRIVATE: '1',
        SVC_MIGRATION_ZENDESK_URL: zendesk.url,
        SVC_GOOGLE_CLIENT_ID: CLIENTS.google.id,
        SVC_GOOGLE_CLIENT_SECRET: CLIENTS.google.secret,
        SVC_OAUTH_ENDPOINT: fake.url,
      },
    });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    const key = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'assistant', scopes: ['migrations:manage'] });
    mcp = await connectMcp(s, key.secret);
  });
  after(async () => {
    await mcp?.close();
    await s?.stop();
    await zendesk.stop();
    await fake?.stop();
  });

  async function step(name: string, args: Record<string, unknown> = {}) {
    const r = await mcp.call(name, args);
    assert.equal(r.isError, false, `${name}: ${r.text}`);
    return r.body;
  }

  test('the prompt says a help desk connects on the link’s page and a sign-in provider with sign_in.url', async () => {
    const prompt = await mcp.client.getPrompt({ name: 'move_to_service', arguments: {} });
    const text = prompt.messages[0].content.type === 'text' ? prompt.messages[0].content.text : '';
    assert.match(text, /sign_in\.url/);
    assert.match(text, /owner/);
    assert.match(text, /Zendesk.*API token/);
    assert.match(text, /Help Scout.*App Secret/);
  });

  test('a Google mailbox: the tool answers the sign-in address, which the owner opens without a session', async () => {
    await seedEmailChannel(s.app, seed, { address: 'support@gmail-workspace.test' });
    const created = await step('migration_create', { provider: 'google', source_address: 'support@gmail-workspace.test', inbox_id: seed.inboxId });
    const id = created.migration.id as string;
    const answer = await step('migration_credentials_link', { migration_id: id });
    assert.equal(answer.migration_id, id);
    const url = new URL(answer.sign_in.url);
    assert.equal(url.origin + url.pathname, `${fake.url}/google/authorize`);
    assert.equal(url.searchParams.get('login_hint'), 'support@gmail-workspace.test');
    assert.match(answer.instructions, /owner of the mailbox/);
    assert.ok(Date.parse(answer.sign_in.expires_at) > clock.now().getTime());
    assert.equal(answer.url, undefined, 'no password link');

    // The owner's browser: the provider, then the callback, with no cookie of this service.
    assert.match(await signIn(s, answer.sign_in.url), /signed_in=google/);
    const status = await step('migration_status', { migration_id: id });
    assert.equal(status.migration.credentials.set, true);
    for (const text of mcp.answers) assert.ok(!text.includes(CLIENTS.google.secret), 'the client secret is never in a tool answer');
  });

  test('a Zendesk help desk: the link’s page takes the API credentials; the tool never sees them', async () => {
    await seedEmailChannel(s.app, seed, { address: 'help@acme.test' });
    const created = await step('migration_create', { provider: 'zendesk', inbox_id: seed.inboxId });
    const id = created.migration.id as string;
    assert.match(created.next_step, /migration_credentials_link/);
    const link = await step('migration_credentials_link', { migration_id: id });
    const token = new URL(link.url).hash.replace(/^#token=/, '');
    const check = await s.request('POST', `/v1/migration-links/${id}/check`, { body: { token } });
    assert.equal(check.body.kind, 'help_desk');
    const put = await s.request('PUT', `/v1/migration-links/${id}/credentials`, {
      body: { token, subdomain: 'acme', email: 'agent@acme.test', api_token: zendesk.token },
    });
    assert.equal(put.body.connected, true, JSON.stringify(put.body));
    const status = await step('migration_status', { migration_id: id });
    assert.equal(status.migration.state, 'connected');
    for (const text of mcp.answers) assert.ok(!text.includes(zendesk.token), 'the API token is never in a tool answer');
  });
});
