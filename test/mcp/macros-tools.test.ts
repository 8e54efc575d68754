// The macros tools of the MCP server: list_macros shows what GET /v1/macros shows the key (shared
// macros); run_macro runs one on conversations (a missing one reported), and a read-only key may not.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp } from './helpers.js';

describe('MCP macros tools', () => {
  let s: TestServer;
  let seed: Seed;
  let conversationId: string;
  let macroId: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    const address = (await seedEmailChannel(s.app, seed)).address!;
    conversationId = (await deliverMail(s, address, { Subject: 'Refund please' })).conversation_id;
    const made = await s.request('POST', '/v1/macros', {
      token: seed.ownerToken,
      body: {
        name: 'Refunds',
        shared: true,
        actions: [
          { type: 'add_label', label: 'refund' },
          { type: 'set_priority', priority: 'high' },
        ],
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    macroId = made.body.id;
    await s.request('POST', '/v1/macros', { token: seed.ownerToken, body: { name: 'Mine', actions: [{ type: 'mark_spam' }] } });
  });
  after(() => s.stop());

  test('list and run; a read-only key is refused', async () => {
    const mcp = await connectMcp(s, seed.apiKey);
    try {
      const listed = await mcp.call('list_macros');
      assert.deepEqual(listed.body, (await s.request('GET', '/v1/macros', { token: seed.apiKey })).body);
      assert.deepEqual(
        listed.body.data.map((m: { name: string }) => m.name),
        ['Refunds'],
      );
      const ran = await mcp.call('run_macro', { macro_id: macroId, conversation_ids: [conversationId, 'cv_nope'] });
      assert.equal(ran.isError, false, ran.text);
      assert.deepEqual(
        ran.body.results.map((r: { ok: boolean }) => r.ok),
        [true, false],
      );
      const c = (await s.request('GET', `/v1/conversations/${conversationId}`, { token: seed.apiKey })).body;
      assert.deepEqual(c.labels, ['refund']);
      assert.equal(c.priority, 'high');
    } finally {
      await mcp.close();
    }
    const readOnly = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'ro', scopes: ['conversations:read'] })).secret;
    const mcp2 = await connectMcp(s, readOnly);
    try {
      const refused = await mcp2.call('run_macro', { macro_id: macroId, conversation_ids: [conversationId] });
      assert.equal(refused.isError, true);
      assert.equal(refused.body.error.code, 'forbidden');
    } finally {
      await mcp2.close();
    }
  });
});
