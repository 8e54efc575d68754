// Drafts stored on the server (issue 34): GET/PUT/DELETE /v1/conversations/{id}/draft per member and
// conversation; teammates see who has one but not its text; sending removes it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SECRET = 'drafts-secret';

describe('drafts on the server', () => {
  let s: TestServer;
  let seed: Seed;
  let agent: { personId: string; token: string };
  let conversation: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET } });
    seed = await seedWorkspace(s.app);
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    // Replies are never sent here (the jobs do not run): the channel only gives the inbox an address.
    await s.app.jobs.stop();
    const address = (await seedEmailChannel(s.app, seed, { smtpPort: 9 })).address!;
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({ To: address, Subject: 'Drafts' }),
      token: SECRET,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    conversation = r.body.data[0].conversation_id;
  });
  after(() => s.stop());

  const url = () => `/v1/conversations/${conversation}/draft`;

  test('a draft is saved sanitized, read back by the same member, and its owner is all a teammate sees', async () => {
    const none = await s.request('GET', url(), { token: seed.ownerToken });
    assert.equal(none.status, 200);
    assert.deepEqual(none.body, { draft: null, teammates: [] });

    const put = await s.request('PUT', url(), { token: seed.ownerToken, body: { kind: 'message', html: '<p>Hi <b>Ana</b><script>x()</script></p>' } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.draft.html, '<p>Hi <b>Ana</b></p>');
    assert.equal(put.body.draft.kind, 'message');

    // Another device of the same member (another session) gets it back.
    const again = await s.request('GET', url(), { token: seed.ownerToken });
    assert.equal(again.body.draft.html, '<p>Hi <b>Ana</b></p>');

    const teammate = await s.request('GET', url(), { token: agent.token });
    assert.equal(teammate.status, 200);
    assert.equal(teammate.body.draft, null);
    assert.deepEqual(
      teammate.body.teammates.map((t: { member_id: string; kind: string }) => [t.member_id, t.kind]),
      [[seed.ownerId, 'message']],
    );
    assert.ok(!JSON.stringify(teammate.body).includes('Ana'), 'a teammate never sees the text');
  });

  test('an empty draft is removed; DELETE discards; a sent reply removes the sender’s draft only', async () => {
    await s.request('PUT', url(), { token: agent.token, body: { kind: 'note', html: '<p>agent note</p>' } });
    const emptied = await s.request('PUT', url(), { token: agent.token, body: { kind: 'note', html: '<p><br></p>' } });
    assert.equal(emptied.status, 200);
    assert.equal(emptied.body.draft, null);
    assert.equal((await s.app.db.selectFrom('drafts').selectAll().where('person_id', '=', agent.personId).execute()).length, 0);

    await s.request('PUT', url(), { token: agent.token, body: { kind: 'note', html: '<p>agent note</p>' } });
    assert.equal((await s.request('DELETE', url(), { token: agent.token })).status, 204);
    assert.equal((await s.request('GET', url(), { token: agent.token })).body.draft, null);

    await s.request('PUT', url(), { token: agent.token, body: { kind: 'note', html: '<p>agent keeps this</p>' } });
    const note = await s.request('POST', `/v1/conversations/${conversation}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'note', html: '<p>Hi <b>Ana</b></p>' },
    });
    assert.equal(note.status, 201, JSON.stringify(note.body));
    assert.equal((await s.request('GET', url(), { token: seed.ownerToken })).body.draft, null);
    assert.equal((await s.request('GET', url(), { token: agent.token })).body.draft.html, '<p>agent keeps this</p>');
  });

  test('bad input is a 4xx that changes nothing; API keys have no drafts; unknown conversations are 404', async () => {
    const before = await s.app.db.selectFrom('drafts').selectAll().orderBy('person_id').execute();
    const bad = [
      { kind: 'reply', html: '<p>x</p>' },
      { kind: 'message' },
      { kind: 'message', html: '<p>x</p>', extra: 1 },
      { kind: 'message', html: '<p>x</p>', attachment_ids: ['at_nope'] },
    ];
    for (const body of bad) {
      const r = await s.request('PUT', url(), { token: seed.ownerToken, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    const key = await s.request('PUT', url(), { token: seed.apiKey, body: { kind: 'message', html: '<p>x</p>' } });
    assert.equal(key.status, 403);
    assert.equal((await s.request('GET', '/v1/conversations/cv_01hnotthere0000000000000000/draft', { token: seed.ownerToken })).status, 404);
    assert.equal((await s.request('GET', url())).status, 401);
    assert.deepEqual(await s.app.db.selectFrom('drafts').selectAll().orderBy('person_id').execute(), before);
  });
});
