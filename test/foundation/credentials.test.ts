// src/auth/credentials.ts below HTTP: a bearer token becomes an identity, a session a workspace
// membership, and the answers follow revocation, expiry and deleted workspaces.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey, revokeApiKey } from '../../src/api-keys/service.js';
import { resolveCredential, resolveMembership, SEEN_EVERY_MS, SESSION_IDLE_MS } from '../../src/auth/credentials.js';
import { addMember } from '../../src/members/store.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { AppError } from '../../src/platform/errors.js';
import { createWorkspace } from '../../src/workspaces/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

async function status(promise: unknown): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    if (error instanceof AppError) return error.status;
    throw error;
  }
}

describe('credentials', () => {
  let s: TestServer;
  let clock: ManualClock;
  let seed: Seed;
  before(async () => {
    clock = new ManualClock('2026-03-01T10:00:00Z');
    s = await startTestServer({ clock });
    seed = await seedWorkspace(s.app);
  });
  after(() => s.stop());

  test('an API key resolves to its workspace, scopes and inbox limit until it is revoked', async () => {
    const { key, secret } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'limited', scopes: ['contacts:read'], inboxIds: [seed.inboxId] });
    const identity = await resolveCredential(s.app, secret);
    assert.equal(identity?.kind, 'api_key');
    if (identity?.kind !== 'api_key') return;
    assert.equal(identity.access.workspaceId, seed.workspaceId);
    assert.deepEqual([...identity.access.scopes], ['contacts:read']);
    assert.deepEqual(identity.access.inboxIds, [seed.inboxId]);
    assert.deepEqual(identity.access.actor, { kind: 'api_key', keyId: key.id });

    assert.equal(await resolveCredential(s.app, secret.slice(0, -1) + (secret.endsWith('a') ? 'b' : 'a')), undefined, 'another secret with the same prefix');
    assert.equal(await resolveCredential(s.app, 'svc_xx_' + secret.slice(7)), undefined, 'an unknown kind of token');
    await revokeApiKey(s.app, key.id);
    assert.equal(await resolveCredential(s.app, secret), undefined, 'revoked');
  });

  test('a session resolves to its person, slides forward when used, and ends after the idle time', async () => {
    const person = await addPerson(s.app, seed.workspaceId, 'agent');
    const identity = await resolveCredential(s.app, person.token);
    assert.equal(identity?.kind, 'session');
    if (identity?.kind !== 'session') return;
    assert.equal(identity.personId, person.personId);
    assert.equal(identity.email, person.email);

    clock.advance(SESSION_IDLE_MS - MINUTE);
    assert.equal((await resolveCredential(s.app, person.token))?.kind, 'session', 'used just before it ends: it slides forward');
    clock.advance(SESSION_IDLE_MS - MINUTE);
    assert.equal((await resolveCredential(s.app, person.token))?.kind, 'session', 'still alive a whole idle time after the first use');
    clock.advance(SESSION_IDLE_MS + MINUTE);
    assert.equal(await resolveCredential(s.app, person.token), undefined, 'idle too long');
  });

  test('a membership: the only workspace, the named one, several without a name, none, a deleted workspace', async () => {
    const person = await addPerson(s.app, seed.workspaceId, 'agent');
    const identity = await resolveCredential(s.app, person.token);
    assert.ok(identity?.kind === 'session');
    // Each request finds its session anew, under its own credentials epoch read, and resolves its
    // membership under that same read: a change made between two requests is seen by the second.
    const request = async () => {
      const again = await resolveCredential(s.app, person.token);
      assert.ok(again?.kind === 'session');
      return again;
    };

    const only = await resolveMembership(s.app, await request(), undefined);
    assert.equal(only.workspaceId, seed.workspaceId);
    assert.deepEqual(only.actor, { kind: 'member', personId: person.personId, role: 'agent', sessionId: identity.sessionId });
    assert.equal(await status(resolveMembership(s.app, await request(), 'ws_not_theirs')), 403);

    const second = await createWorkspace(s.app, { name: 'Second', ownerEmail: `second-owner-${Date.now()}@example.com`, origin: 'bootstrap' });
    await addMember(s.app, second.workspace.id, person.personId, 'admin');
    assert.equal(await status(resolveMembership(s.app, await request(), undefined)), 400, 'several workspaces and none named');
    const named = await resolveMembership(s.app, await request(), second.workspace.id);
    assert.equal(named.workspaceId, second.workspace.id);
    assert.equal(named.actor.kind === 'member' && named.actor.role, 'admin');

    await s.app.db.updateTable('workspaces').set({ deleted_at: clock.now().toISOString() }).where('id', '=', second.workspace.id).execute();
    assert.equal(await status(resolveMembership(s.app, await request(), second.workspace.id)), 403, 'a deleted workspace is no membership');
    assert.equal((await resolveMembership(s.app, await request(), undefined)).workspaceId, seed.workspaceId, 'the one left is the only one');
  });

  test('resolving a membership notes the member as seen, at most every few minutes', async () => {
    const person = await addPerson(s.app, seed.workspaceId, 'agent');
    const identity = await resolveCredential(s.app, person.token);
    assert.ok(identity?.kind === 'session');
    const seen = () => s.app.db.selectFrom('memberships').select('last_seen_at').where('person_id', '=', person.personId).executeTakeFirstOrThrow();
    await resolveMembership(s.app, identity, seed.workspaceId);
    const first = (await seen()).last_seen_at;
    assert.equal(first, clock.now().toISOString());
    clock.advance(SEEN_EVERY_MS - MINUTE);
    await resolveMembership(s.app, identity, seed.workspaceId);
    assert.equal((await seen()).last_seen_at, first, 'not written again so soon');
    clock.advance(2 * MINUTE);
    await resolveMembership(s.app, identity, seed.workspaceId);
    assert.equal((await seen()).last_seen_at, clock.now().toISOString());
  });
});
