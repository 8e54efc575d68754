// The custom fields tools of the MCP server: list_custom_fields reads what GET /v1/custom-fields
// shows; set_conversation_custom_fields and set_contact_custom_fields set values (checked by type, a
// bad one refused with the field named); read_conversation and list_conversations show them and
// list_conversations filters by them; a key without the write scope may not set them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp } from './helpers.js';

describe('MCP custom fields tools', () => {
  let s: TestServer;
  let seed: Seed;
  let conversationId: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    const address = (await seedEmailChannel(s.app, seed)).address!;
    conversationId = (await deliverMail(s, address, { Subject: 'Refund please' })).conversation_id;
    for (const body of [
      { object: 'conversation', key: 'reason', label: 'Reason', type: 'single_select', options: ['refund', 'bug'] },
      { object: 'conversation', key: 'amount', label: 'Amount', type: 'number' },
      { object: 'contact', key: 'vip', label: 'VIP', type: 'checkbox' },
    ]) {
      assert.equal((await s.request('POST', '/v1/custom-fields', { token: seed.ownerToken, body })).status, 201);
    }
  });
  after(() => s.stop());

  test('list, set, read and filter; bad values and read-only keys refused', async () => {
    const mcp = await connectMcp(s, seed.apiKey);
    try {
      const listed = await mcp.call('list_custom_fields');
      assert.deepEqual(listed.body.data, (await s.request('GET', '/v1/custom-fields', { token: seed.apiKey })).body.data);
      const set = await mcp.call('set_conversation_custom_fields', { conversation_id: conversationId, values: { reason: 'refund', amount: 19.9 } });
      assert.equal(set.isError, false, set.text);
      assert.deepEqual(set.body.custom_fields, { reason: 'refund', amount: 19.9 });
      const bad = await mcp.call('set_conversation_custom_fields', { conversation_id: conversationId, values: { reason: 'other' } });
      assert.equal(bad.isError, true);
      assert.equal(bad.body.error.status, 400);
      assert.match(bad.text, /custom_fields\.reason/);
      const read = await mcp.call('read_conversation', { conversation_id: conversationId });
      assert.deepEqual(read.body.conversation.custom_fields, { reason: 'refund', amount: 19.9 });
      const found = await mcp.call('list_conversations', { custom_fields: { reason: 'refund' } });
      assert.deepEqual(
        found.body.data.map((c: any) => c.id),
        [conversationId],
      );
      assert.deepEqual((await mcp.call('list_conversations', { custom_fields: { reason: 'bug' } })).body.data, []);
      const contactId = read.body.conversation.contact_id;
      const contact = await mcp.call('set_contact_custom_fields', { contact_id: contactId, values: { vip: true } });
      assert.equal(contact.isError, false, contact.text);
      assert.deepEqual(contact.body.custom_fields, { vip: true });
      assert.deepEqual((await s.request('GET', `/v1/contacts/${contactId}`, { token: seed.apiKey })).body.custom_fields, { vip: true });
    } finally {
      await mcp.close();
    }
    const readOnly = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'ro', scopes: ['conversations:read', 'contacts:read'] })).secret;
    const limited = await connectMcp(s, readOnly);
    try {
      const r = await limited.call('set_conversation_custom_fields', { conversation_id: conversationId, values: { amount: 1 } });
      assert.equal(r.isError, true, r.text);
      assert.equal(r.body.error.status, 403);
      assert.equal((await limited.call('list_custom_fields')).isError, false);
    } finally {
      await limited.close();
    }
    assert.equal((await s.request('GET', `/v1/conversations/${conversationId}`, { token: seed.apiKey })).body.custom_fields.amount, 19.9);
  });
});
