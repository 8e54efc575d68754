// Passkeys below the browser: the server's rules, each with an authenticator that lies about one
// thing (test/helpers/webauthn.ts). The whole ceremony in Chromium is test/e2e/passkeys.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runRetention } from '../../src/lifecycle/retention.js';
import { PASSKEY_CHALLENGE_TTL_MS, PASSKEYS_PER_PERSON, passkeyChallengesRule, relyingParty } from '../../src/people/passkeys.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { addPerson, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';

const ORIGIN = 'https://svc.example.test';

describe('passkeys', () => {
  let s: TestServer;
  let clock: ManualClock;

  before(async () => {
    clock = new ManualClock('2026-03-01T10:00:00Z');
    s = await startTestServer({ clock, env: { SVC_PUBLIC_URL: ORIGIN } });
    await s.app.jobs.stop();
  });
  after(() => s.stop());

  /** A person with a session and one registered passkey. */
  async function personWithPasskey(name?: string) {
    const ws = await seedWorkspace(s.app);
    const authenticator = new SoftAuthenticator(ORIGIN);
    const options = await s.request('POST', '/v1/me/passkeys/options', { token: ws.ownerToken });
    assert.equal(options.status, 200, JSON.stringify(options.body));
    const created = await s.request('POST', '/v1/me/passkeys', {
      token: ws.ownerToken,
      body: { credential: authenticator.register(options.body), ...(name ? { name } : {}) },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const email = (await s.request('GET', '/v1/me', { token: ws.ownerToken })).body.person.email as string;
    return { ws, token: ws.ownerToken, email, authenticator, passkey: created.body };
  }

  async function signInOptions(email?: string) {
    const r = await s.request('POST', '/v1/auth/passkey/options', { body: email === undefined ? {} : { email } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  }

  const verify = (credential: unknown) => s.request('POST', '/v1/auth/passkey/verify', { body: { credential } });
  const sessions = async () =>
    Number(
      (
        await s.app.db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const counterOf = async (passkeyId: string) =>
    Number((await s.app.db.selectFrom('passkeys').select('sign_count').where('id', '=', passkeyId).executeTakeFirstOrThrow()).sign_count);

  test('register, list, rename, sign in with and without the address, delete', async () => {
    const { token, email, authenticator, passkey } = await personWithPasskey('Laptop');
    assert.match(passkey.id, /^pk_/);
    assert.deepEqual(Object.keys(passkey).sort(), ['created_at', 'id', 'last_used_at', 'name', 'synced', 'transports']);
    assert.equal(passkey.name, 'Laptop');

    const options = await s.request('POST', '/v1/me/passkeys/options', { token });
    assert.equal(options.body.rp.id, 'svc.example.test');
    assert.equal(options.body.authenticatorSelection.residentKey, 'required');
    assert.equal(options.body.authenticatorSelection.userVerification, 'required');
    assert.deepEqual(
      options.body.excludeCredentials.map((c: { id: string }) => c.id),
      [authenticator.id],
      'the registered passkey is excluded',
    );

    // Discoverable: no address.
    const any = await signInOptions();
    assert.equal(any.allowCredentials, undefined);
    assert.equal(any.rpId, 'svc.example.test');
    const signedIn = await verify(authenticator.assert(any));
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.match(signedIn.body.token, /^svc_ses_/);
    assert.equal(signedIn.body.person.email, email);
    assert.match(signedIn.headers.get('set-cookie')!, /svc_session=svc_ses_.*HttpOnly/);
    assert.equal((await s.request('GET', '/v1/me', { token: signedIn.body.token })).body.person.email, email);
    assert.ok(!s.rawLogs.join('\n').includes(signedIn.body.token), 'the session token never reaches the log');

    // After typing the address: only that person's passkeys are offered.
    const typed = await signInOptions(email.toUpperCase());
    assert.deepEqual(
      typed.allowCredentials.map((c: { id: string }) => c.id),
      [authenticator.id],
    );
    const second = await verify(authenticator.assert(typed));
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(await counterOf(passkey.id), 2, 'the counter is stored');

    const listed = await s.request('GET', '/v1/me/passkeys', { token });
    assert.equal(listed.body.data.length, 1);
    assert.equal(listed.body.data[0].last_used_at, '2026-03-01T10:00:00.000Z');
    assert.equal(listed.body.next_cursor, null);

    const renamed = await s.request('PATCH', `/v1/me/passkeys/${passkey.id}`, { token, body: { name: '  Work laptop ' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Work laptop');

    assert.equal((await s.request('DELETE', `/v1/me/passkeys/${passkey.id}`, { token })).status, 204);
    assert.deepEqual((await s.request('GET', '/v1/me/passkeys', { token })).body.data, []);
    const gone = await verify(authenticator.assert(await signInOptions()));
    assert.equal(gone.status, 401);
    assert.match(gone.body.error.message, /not registered/);
  });

  test('challenges are single use, expire, and serve only their own ceremony and person', async () => {
    const { token, email, authenticator, passkey } = await personWithPasskey();
    const options = await signInOptions();
    const answer = authenticator.assert(options);
    assert.equal((await verify(answer)).status, 200);
    const replay = await verify(answer);
    assert.equal(replay.status, 401, 'the same answer again');
    assert.match(replay.body.error.message, /used or expired/);

    // Expired: options older than the TTL.
    const old = await signInOptions(email);
    clock.advance(PASSKEY_CHALLENGE_TTL_MS + 1);
    const late = await verify(authenticator.assert(old));
    assert.equal(late.status, 401);
    assert.match(late.body.error.message, /used or expired/);

    // A failed attempt uses the challenge up too.
    const once = await signInOptions();
    assert.equal((await verify(authenticator.assert(once, { origin: 'https://evil.example' }))).status, 401);
    assert.equal((await verify(authenticator.assert(once))).status, 401);

    // Registration options do not sign in, sign-in options do not register.
    const reg = await s.request('POST', '/v1/me/passkeys/options', { token });
    assert.equal((await verify(authenticator.assert(reg.body))).status, 401);
    const fresh = new SoftAuthenticator(ORIGIN);
    const wrongKind = await s.request('POST', '/v1/me/passkeys', {
      token,
      body: { credential: fresh.register({ challenge: (await signInOptions()).challenge, user: { id: 'x' } }) },
    });
    assert.equal(wrongKind.status, 400);
    // Another person's registration options are not yours.
    const other = await addPerson(s.app, (await seedWorkspace(s.app)).workspaceId, 'agent');
    const theirs = await s.request('POST', '/v1/me/passkeys/options', { token: other.token });
    const stolen = await s.request('POST', '/v1/me/passkeys', { token, body: { credential: fresh.register(theirs.body) } });
    assert.equal(stolen.status, 400);
    assert.match(stolen.body.error.message, /no open passkey options/);
    assert.equal((await s.request('GET', '/v1/me/passkeys', { token })).body.data.length, 1);
    assert.equal(await counterOf(passkey.id), 1, 'refused answers change nothing');
  });

  test('wrong origin, wrong RP ID, no user verification, counter not growing: refused, nothing changes', async () => {
    const { email, authenticator, passkey } = await personWithPasskey();
    assert.equal((await verify(authenticator.assert(await signInOptions()))).status, 200);
    const before = await sessions();
    const cases: [string, Parameters<SoftAuthenticator['assert']>[1], RegExp][] = [
      ['origin', { origin: 'https://svc.example.test.evil.example' }, /origin/],
      ['origin (http)', { origin: 'http://svc.example.test' }, /origin/],
      ['RP ID', { rpId: 'example.test' }, /RP ID/i],
      ['user verification', { unverified: true }, /verif/],
      ['counter equal', { counter: 1 }, /counter did not grow/],
      ['counter backwards', { counter: 0 }, /counter did not grow/],
      ['another user handle', { userHandle: Buffer.from('per_someone_else').toString('base64url') }, /another user/],
    ];
    for (const [what, lies, message] of cases) {
      const r = await verify(authenticator.assert(await signInOptions(email), lies));
      assert.equal(r.status, 401, what);
      assert.equal(r.body.error.code, 'unauthorized', what);
      assert.match(r.body.error.message, message, what);
    }
    assert.equal(await sessions(), before, 'no session was opened');
    assert.equal(await counterOf(passkey.id), 1, 'the stored counter stayed');
    assert.ok(
      s.logs.some((l) => l.msg.includes('sign counter did not grow') && l.credential === passkey.id),
      'a possible clone is logged',
    );
    // A growing counter is accepted again.
    const ok = await verify(authenticator.assert(await signInOptions(), { counter: 7 }));
    assert.equal(ok.status, 200);
    assert.equal(await counterOf(passkey.id), 7);

    // Registration checks the origin, the RP ID and user verification too.
    const token = (await seedWorkspace(s.app)).ownerToken;
    for (const lies of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { unverified: true }]) {
      const options = await s.request('POST', '/v1/me/passkeys/options', { token });
      const r = await s.request('POST', '/v1/me/passkeys', { token, body: { credential: new SoftAuthenticator(ORIGIN).register(options.body, lies) } });
      assert.equal(r.status, 400, JSON.stringify(lies));
      assert.match(r.body.error.message, /could not be registered/);
    }
    assert.deepEqual((await s.request('GET', '/v1/me/passkeys', { token })).body.data, []);
  });

  test('two sign-ins at once with one answer, or with one counter value: exactly one session', async () => {
    const { authenticator, passkey } = await personWithPasskey();
    const answer = authenticator.assert(await signInOptions());
    const same = await Promise.all([verify(answer), verify(answer), verify(answer)]);
    assert.deepEqual(same.map((r) => r.status).sort(), [200, 401, 401]);
    const [o1, o2] = [await signInOptions(), await signInOptions()];
    const racing = await Promise.all([verify(authenticator.assert(o1, { counter: 5 })), verify(authenticator.assert(o2, { counter: 5 }))]);
    assert.deepEqual(racing.map((r) => r.status).sort(), [200, 401]);
    assert.equal(await counterOf(passkey.id), 5);
  });

  test('after typing an address only that person’s passkey signs in; unknown addresses look like known ones', async () => {
    const a = await personWithPasskey();
    const b = await personWithPasskey();
    const wrong = await verify(a.authenticator.assert(await signInOptions(b.email)));
    assert.equal(wrong.status, 401);
    assert.match(wrong.body.error.message, /does not belong to the address/);

    const unknown = await signInOptions('nobody@example.com');
    const unknownAgain = await signInOptions('nobody@example.com');
    const noPasskeys = await signInOptions((await addPerson(s.app, a.ws.workspaceId, 'agent')).email);
    for (const o of [unknown, noPasskeys]) {
      assert.equal(o.allowCredentials.length, 1, 'one credential is offered, as for a person with one passkey');
      assert.equal(Buffer.from(o.allowCredentials[0].id, 'base64url').length, 32);
    }
    assert.equal(unknown.allowCredentials[0].id, unknownAgain.allowCredentials[0].id, 'the same each time');
    assert.notEqual(unknown.allowCredentials[0].id, noPasskeys.allowCredentials[0].id);
    const r = await verify(a.authenticator.assert(unknown));
    assert.equal(r.status, 401, 'a real passkey does not answer for an unknown address');
  });

  test('bad input gets a clear 4xx, never a 500', async () => {
    const { token, authenticator, passkey } = await personWithPasskey();
    const options = await signInOptions();
    const good = authenticator.assert(options);
    const bodies: unknown[] = [
      {},
      { credential: { ...good, response: { ...good.response, clientDataJSON: Buffer.from('not json').toString('base64url') } } },
      { credential: { ...good, response: { ...good.response, clientDataJSON: Buffer.from('{"challenge":5}').toString('base64url') } } },
      { credential: { ...good, response: { ...good.response, signature: 'not base64url!' } } },
      { credential: { ...good, type: 'password' } },
      { credential: good, extra: 1 },
    ];
    for (const body of bodies) {
      const r = await s.request('POST', '/v1/auth/passkey/verify', { body });
      assert.ok(r.status === 400 || r.status === 401, `${r.status} ${JSON.stringify(r.body)}`);
      assert.ok(r.body.error.code && r.body.error.message);
    }
    assert.equal((await verify(good)).status, 200, 'the options were not used up by the malformed bodies');
    assert.equal((await s.request('POST', '/v1/auth/passkey/options', { body: { email: 'not an address' } })).status, 400);
    const badSignature = authenticator.assert(await signInOptions());
    badSignature.response.signature = Buffer.from('garbage').toString('base64url');
    assert.equal((await verify(badSignature)).status, 401);

    assert.equal((await s.request('PATCH', `/v1/me/passkeys/${passkey.id}`, { token, body: { name: 'x'.repeat(101) } })).status, 400);
    assert.equal((await s.request('PATCH', `/v1/me/passkeys/${passkey.id}`, { token, body: { name: '' } })).status, 400);
    const cleared = await s.request('PATCH', `/v1/me/passkeys/${passkey.id}`, { token, body: { name: null } });
    assert.equal(cleared.body.name, null);

    // Someone else's passkey is not found; API keys cannot manage passkeys.
    const other = await seedWorkspace(s.app);
    assert.equal((await s.request('PATCH', `/v1/me/passkeys/${passkey.id}`, { token: other.ownerToken, body: { name: 'mine' } })).status, 404);
    assert.equal((await s.request('DELETE', `/v1/me/passkeys/${passkey.id}`, { token: other.ownerToken })).status, 404);
    assert.equal((await s.request('GET', '/v1/me/passkeys', { token: other.apiKey })).status, 403);
    assert.equal((await s.request('POST', '/v1/me/passkeys/options', {})).status, 401);

    // The same authenticator twice: 409.
    const again = await s.request('POST', '/v1/me/passkeys/options', { token });
    const dup = await s.request('POST', '/v1/me/passkeys', { token, body: { credential: authenticator.register(again.body) } });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error.code, 'passkey_exists');
  });

  test('a person may hold a limited number of passkeys', async () => {
    const ws = await seedWorkspace(s.app);
    const values = Array.from({ length: PASSKEYS_PER_PERSON }, (_, i) => ({
      id: `pk_limit${ws.ownerId}${i}`,
      person_id: ws.ownerId,
      credential_id: `cred-${ws.ownerId}-${i}`,
      public_key: 'AA',
      transports: null,
      aaguid: null,
      backup_eligible: 0,
      backed_up: 0,
      name: null,
      created_at: '2026-03-01T10:00:00.000Z',
      last_used_at: null,
    }));
    await s.app.db.insertInto('passkeys').values(values).execute();
    const r = await s.request('POST', '/v1/me/passkeys/options', { token: ws.ownerToken });
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, 'passkey_limit');
    const page = await s.request('GET', '/v1/me/passkeys?limit=10', { token: ws.ownerToken });
    assert.equal(page.body.data.length, 10);
    const next = await s.request('GET', `/v1/me/passkeys?limit=20&cursor=${page.body.next_cursor}`, { token: ws.ownerToken });
    assert.equal(next.body.data.length, 15);
    assert.equal(new Set([...page.body.data, ...next.body.data].map((p: { id: string }) => p.id)).size, 25);
  });

  test('retention removes expired challenges only; deleting the account removes passkeys and their options', async () => {
    const challenges = async () =>
      Number(
        (
          await s.app.db
            .selectFrom('passkey_challenges')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    clock.advance(PASSKEY_CHALLENGE_TTL_MS);
    await runRetention(s.app, [passkeyChallengesRule]);
    assert.equal(await challenges(), 0, 'what earlier tests left has expired');
    await signInOptions();
    clock.advance(PASSKEY_CHALLENGE_TTL_MS);
    await signInOptions();
    assert.equal(await challenges(), 2);
    const report = await runRetention(s.app); // the hourly job's rules
    assert.equal(report.deleted.passkey_challenges, 1);
    assert.equal(await challenges(), 1, 'the live one stays');
    clock.advance(MINUTE * 6);
    await runRetention(s.app, [passkeyChallengesRule]);
    assert.equal(await challenges(), 0);

    const ws = await seedWorkspace(s.app);
    const person = await addPerson(s.app, ws.workspaceId, 'agent');
    const authenticator = new SoftAuthenticator(ORIGIN);
    const options = await s.request('POST', '/v1/me/passkeys/options', { token: person.token });
    assert.equal((await s.request('POST', '/v1/me/passkeys', { token: person.token, body: { credential: authenticator.register(options.body) } })).status, 201);
    await s.request('POST', '/v1/me/passkeys/options', { token: person.token });
    const pending = await signInOptions(person.email);
    const deleted = await s.request('DELETE', '/v1/me', { token: person.token, body: { email: person.email } });
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.passkeys, 1);
    assert.equal(await challenges(), 0, 'the person’s open options went with the account');
    assert.equal((await verify(authenticator.assert(pending))).status, 401);
    assert.equal((await verify(authenticator.assert(await signInOptions()))).status, 401);
  });

  test('the OpenAPI document describes the passkey routes', async () => {
    const doc = (await s.request('GET', '/v1/openapi.json')).body;
    const routes = {
      '/v1/auth/passkey/options': ['post'],
      '/v1/auth/passkey/verify': ['post'],
      '/v1/me/passkeys/options': ['post'],
      '/v1/me/passkeys': ['get', 'post'],
      '/v1/me/passkeys/{passkeyId}': ['delete', 'patch'],
    };
    for (const [route, methods] of Object.entries(routes)) {
      assert.deepEqual(Object.keys(doc.paths[route] ?? {}).sort(), methods, route);
      for (const m of methods) assert.deepEqual(doc.paths[route][m].tags, ['passkeys'], `${m} ${route}`);
    }
  });

  test('the relying party must be a secure origin with a domain name', async () => {
    assert.deepEqual(relyingParty({ publicUrl: 'https://svc.example.com' }), { id: 'svc.example.com', origin: 'https://svc.example.com' });
    assert.deepEqual(relyingParty({ publicUrl: 'http://localhost:8080' }), { id: 'localhost', origin: 'http://localhost:8080' });
    assert.deepEqual(relyingParty({ publicUrl: 'http://panel.localhost:8080' }), { id: 'panel.localhost', origin: 'http://panel.localhost:8080' });
    for (const publicUrl of ['http://127.0.0.1:8080', 'https://127.0.0.1', 'https://[::1]:8443', 'http://svc.example.com']) {
      assert.throws(
        () => relyingParty({ publicUrl }),
        (e: { code?: string }) => e.code === 'passkeys_unavailable',
        publicUrl,
      );
    }
    const plain = await startTestServer();
    try {
      const r = await plain.request('POST', '/v1/auth/passkey/options', { body: {} });
      assert.equal(r.status, 409);
      assert.equal(r.body.error.code, 'passkeys_unavailable');
      assert.match(r.body.error.message, /SVC_PUBLIC_URL/);
    } finally {
      await plain.stop();
    }
  });
});
