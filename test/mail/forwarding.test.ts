import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { addPerson, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, rawMail, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, testEnv } from '../helpers/server.js';

describe('forwarding addresses', () => {
  test('channels get one on SVC_FORWARDING_DOMAIN (also after the setting appears); rotating cuts the old one off', async () => {
    const te = await testEnv({ SVC_INGRESS_SECRET: INGRESS_SECRET });
    try {
      // Without the setting there is none.
      const a = await startTestServer({ testEnv: te });
      const seed = await seedWorkspace(a.app);
      const ch = await seedEmailChannel(a.app, seed);
      assert.equal(ch.forwarding_address, null);
      await a.stop();

      const s = await startTestServer({ testEnv: te, env: { SVC_FORWARDING_DOMAIN: 'in.fwd.example' } });
      try {
        const listed = await s.request('GET', `/v1/channels?inbox_id=${seed.inboxId}`, { token: seed.apiKey });
        const first = listed.body.data[0].forwarding_address as string;
        assert.match(first, /^in-[0-9a-z]{16}@in\.fwd\.example$/);
        await deliverMail(s, first, { From: 'fwd@cust.example' });

        const agent = await addPerson(s.app, seed.workspaceId, 'agent');
        assert.equal((await s.request('POST', `/v1/channels/${ch.id}/forwarding-address/rotate`, { token: agent.token })).status, 403);
        const limited = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'x', inboxIds: [seed.inboxId], scopes: ['conversations:read'] }))
          .secret;
        assert.equal((await s.request('POST', `/v1/channels/${ch.id}/forwarding-address/rotate`, { token: limited })).status, 403);
        const other = await seedWorkspace(s.app);
        assert.equal((await s.request('POST', `/v1/channels/${ch.id}/forwarding-address/rotate`, { token: other.apiKey })).status, 404);

        const rotated = await s.request('POST', `/v1/channels/${ch.id}/forwarding-address/rotate`, { token: seed.apiKey });
        assert.equal(rotated.status, 200);
        const second = rotated.body.forwarding_address as string;
        assert.notEqual(second, first);
        assert.match(second, /@in\.fwd\.example$/);
        const old = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(first)}`, { raw: rawMail({ To: first }), token: INGRESS_SECRET });
        assert.equal(old.status, 404, 'the old address no longer receives mail');
        await deliverMail(s, second, { From: 'fwd@cust.example' });
        const chat = await s.request('POST', '/v1/channels', {
          token: seed.apiKey,
          body: { kind: 'chat', inbox_id: seed.inboxId, name: 'w', origins: ['https://a.example'] },
        });
        assert.equal((await s.request('POST', `/v1/channels/${chat.body.id}/forwarding-address/rotate`, { token: seed.apiKey })).status, 400);
      } finally {
        await s.stop();
      }
    } finally {
      await te.cleanup();
    }
  });
});
