// Limits stated in characters count characters (code points), not UTF-16 units: 251 emoji fit in
// "up to 500 characters", and 501 do not.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { denyBroadcasts } from '../../src/broadcasts/governance.js';
import { charCount } from '../../src/platform/text.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { runSvc, startTestServer, type TestServer } from '../helpers/server.js';

const EMOJI = '😀'; // one character, two UTF-16 units

test('charCount counts code points; a lone surrogate is one', () => {
  assert.equal(charCount(''), 0);
  assert.equal(charCount('abc'), 3);
  assert.equal(charCount(EMOJI.repeat(251)), 251);
  assert.equal(charCount('a\ud800b'), 3);
  assert.equal(charCount('\udc00\ud800'), 2);
});

describe('limits in characters', () => {
  let s: TestServer;
  let seed: Seed;
  before(async () => {
    s = await startTestServer();
    seed = await seedWorkspace(s.app);
  });
  after(() => s?.stop());

  test('the operator’s reason: up to 500 characters, so 251 emoji (502 UTF-16 units) and 500 emoji fit, 501 do not', async () => {
    const workspace = await s.app.db.selectFrom('workspaces').selectAll().where('id', '=', seed.workspaceId).executeTakeFirstOrThrow();
    const denied = await denyBroadcasts(s.app, workspace, EMOJI.repeat(251));
    assert.equal(denied.reason, EMOJI.repeat(251));
    assert.equal((await denyBroadcasts(s.app, workspace, EMOJI.repeat(500))).reason, EMOJI.repeat(500));
    await assert.rejects(denyBroadcasts(s.app, workspace, EMOJI.repeat(501)), /at most 500 characters/);
  });

  test('the command line counts the same way', async () => {
    const env = s.env;
    const ok = await runSvc(['workspace', 'broadcasts', 'deny', '--workspace', seed.workspaceId, '--reason', EMOJI.repeat(251)], { env });
    assert.equal(ok.code, 0, ok.stderr);
    const long = await runSvc(['workspace', 'broadcasts', 'deny', '--workspace', seed.workspaceId, '--reason', EMOJI.repeat(501)], { env });
    assert.equal(long.code, 2);
    assert.match(long.stderr, /at most 500 characters/);
  });

  test('API names and texts: 200 emoji make a 200-character name; 201 are refused with 400 and change nothing', async () => {
    const named = await s.request('POST', '/v1/inboxes', { token: seed.apiKey, body: { name: EMOJI.repeat(200) } });
    assert.equal(named.status, 201, JSON.stringify(named.body));
    assert.equal(named.body.name, EMOJI.repeat(200));
    const tooLong = await s.request('POST', '/v1/inboxes', { token: seed.apiKey, body: { name: EMOJI.repeat(201) } });
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.error.code, 'invalid_request');
    const key = await s.request('POST', '/v1/api-keys', { token: seed.ownerToken, body: { name: EMOJI.repeat(200) } });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const ws = await s.request('PATCH', `/v1/inboxes/${named.body.id}`, { token: seed.apiKey, body: { name: `${'x'.repeat(199)}${EMOJI}` } });
    assert.equal(ws.status, 200, JSON.stringify(ws.body));
    const doc = await s.request('GET', '/v1/openapi.json');
    assert.equal(doc.status, 200);
  });
});
