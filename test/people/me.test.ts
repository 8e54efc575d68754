// The signed-in person's own name and panel language: PATCH /v1/me changes them, GET /v1/me shows
// them, and bad input is refused with 400 without changing anything.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('my account: name and locale', () => {
  let s: TestServer;
  let seed: Seed;

  before(async () => {
    s = await startTestServer();
    seed = await seedWorkspace(s.app);
  });
  after(() => s.stop());

  const me = async () => (await s.request('GET', '/v1/me', { token: seed.ownerToken })).body.person;
  const patch = (body: unknown) => s.request('PATCH', '/v1/me', { token: seed.ownerToken, body });

  test('name (trimmed) and locale change, and GET /v1/me shows them; the members list shows the new name', async () => {
    const changed = await patch({ name: '  Ayşe Yılmaz  ', locale: 'tr' });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.person.name, 'Ayşe Yılmaz');
    assert.equal(changed.body.person.locale, 'tr');
    assert.equal(changed.body.memberships[0].workspace_id, seed.workspaceId);
    const now = await me();
    assert.equal(now.name, 'Ayşe Yılmaz');
    assert.equal(now.locale, 'tr');
    const members = await s.request('GET', '/v1/members', { token: seed.ownerToken, headers: { 'svc-workspace': seed.workspaceId } });
    assert.ok(members.body.data.some((m: { name: string | null }) => m.name === 'Ayşe Yılmaz'));

    assert.equal((await patch({ locale: 'en' })).status, 200);
    assert.deepEqual([(await me()).name, (await me()).locale], ['Ayşe Yılmaz', 'en'], 'a field left out stays as it was');
    const exactly100 = 'x'.repeat(100);
    assert.equal((await patch({ name: ` ${exactly100} ` })).body.person.name, exactly100);
  });

  test('bad input: 400 invalid_request, and nothing changes', async () => {
    assert.equal((await patch({ name: 'Before', locale: 'en' })).status, 200);
    const refused: unknown[] = [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { name: null },
      { name: 42 },
      { locale: 'de' },
      { locale: 'TR' },
      { locale: null },
      { name: 'After', email: 'someone@example.com' },
      { name: 'After', locale: 'fr' },
    ];
    for (const body of refused) {
      const r = await patch(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request', JSON.stringify(body));
      assert.equal(typeof r.body.error.message, 'string');
    }
    const now = await me();
    assert.deepEqual([now.name, now.locale], ['Before', 'en']);
  });

  test('an API key is refused (a person-level route); no credentials is 401', async () => {
    const byKey = await s.request('PATCH', '/v1/me', { token: seed.apiKey, body: { name: 'Robot' } });
    assert.equal(byKey.status, 403);
    assert.equal((await s.request('PATCH', '/v1/me', { body: { name: 'Nobody' } })).status, 401);
    assert.notEqual((await me()).name, 'Robot');
  });

  test('the panel’s cookie from another site is refused', async () => {
    const r = await s.request('PATCH', '/v1/me', {
      body: { name: 'Forged' },
      headers: { cookie: `svc_session=${seed.ownerToken}`, origin: 'https://evil.example' },
    });
    assert.equal(r.status, 403);
    assert.notEqual((await me()).name, 'Forged');
  });
});
