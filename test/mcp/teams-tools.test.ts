// The teams tools of the MCP server: list_teams reads what GET /v1/teams shows; assign_conversation_team
// puts a conversation in a team and takes it out (a timeline line each), refuses a team of no one, and
// keeps a key's inbox limit; a key without conversations:write may not use it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp } from './helpers.js';

describe('MCP teams tools', () => {
  let s: TestServer;
  let seed: Seed;
  let conversationId: string;
  let teamId: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    const address = (await seedEmailChannel(s.app, seed)).address!;
    conversationId = (await deliverMail(s, address, { Subject: 'Where is my order?' })).conversation_id;
    const made = await s.request('POST', '/v1/teams', { token: seed.ownerToken, body: { name: 'Orders', member_ids: [seed.ownerId] } });
    teamId = made.body.id;
  });
  after(() => s.stop());

  test('list, assign to a team and back out; bad team, other inbox and read-only keys refused', async () => {
    const mcp = await connectMcp(s, seed.apiKey);
    try {
      const listed = await mcp.call('list_teams');
      assert.deepEqual(listed.body, (await s.request('GET', '/v1/teams', { token: seed.apiKey })).body);
      const put = await mcp.call('assign_conversation_team', { conversation_id: conversationId, team_id: teamId });
      assert.equal(put.isError, false, put.text);
      assert.equal(put.body.team_id, teamId);
      const bad = await mcp.call('assign_conversation_team', { conversation_id: conversationId, team_id: 'team_nobody' });
      assert.equal(bad.isError, true);
      assert.equal(bad.body.error.status, 400);
      const out = await mcp.call('assign_conversation_team', { conversation_id: conversationId, team_id: null });
      assert.equal(out.body.team_id, null);
      const lines = await s.app.db.selectFrom('messages').select('details').where('conversation_id', '=', conversationId).where('kind', '=', 'event').execute();
      assert.equal(lines.filter((l) => JSON.parse(l.details!).changes.team_id).length, 2);
    } finally {
      await mcp.close();
    }
    const other = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Elsewhere' });
    for (const [scopes, inboxIds] of [
      [['conversations:read'], undefined],
      [['conversations:read', 'conversations:write'], [other.id]],
    ] as const) {
      const key = (
        await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'limited', scopes: [...scopes], inboxIds: inboxIds ? [...inboxIds] : undefined })
      ).secret;
      const limited = await connectMcp(s, key);
      try {
        const r = await limited.call('assign_conversation_team', { conversation_id: conversationId, team_id: teamId });
        assert.equal(r.isError, true, r.text);
        assert.equal(r.body.error.status, inboxIds ? 404 : 403);
      } finally {
        await limited.close();
      }
    }
    assert.equal((await s.request('GET', `/v1/conversations/${conversationId}`, { token: seed.apiKey })).body.team_id, null);
  });
});
