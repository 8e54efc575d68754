// The read-only HTTP client of help-desk migrations against loopback fakes of Zendesk and Help
// Scout: any method but GET refused before sending (Help Scout's token POST allowed to its token URL
// only), 429 with Retry-After and the per-minute limits (waited out and shown). The providers from
// draft to completed: helpdesk-zendesk.test.ts, helpdesk-help-scout.test.ts; the scene is
// helpdesk-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SourceError } from '../../src/mailbox-migration/sources/connect.js';
import { HelpScoutReader } from '../../src/mailbox-migration/sources/helpdesk/help-scout.js';
import { type HttpWait, ReadOnlyHttp } from '../../src/mailbox-migration/sources/helpdesk/http.js';
import { ReadOnlyViolation } from '../../src/mailbox-migration/sources/imap.js';
import { sceneOf } from '../helpers/scene.js';
import { startHelpdeskScene, stopHelpdeskScene } from './helpdesk-scene.js';

describe('the read-only HTTP client of help-desk migrations', () => {
  const scene = sceneOf(startHelpdeskScene, stopHelpdeskScene);

  test('the HTTP client sends GET only: any other method is refused before it is sent; a POST goes only to the token URL', async () => {
    const { zendesk, helpScout, rc } = scene();
    const before = zendesk.requests.length;
    const client = new ReadOnlyHttp({ ctx: rc().ctx, authorization: async () => 'Basic x' });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) {
      await assert.rejects(client.send(method, `${zendesk.url}/api/v2/tickets/1.json`, { bucket: { name: 't', perMinute: 100 } }), (e: unknown) => {
        assert.ok(e instanceof ReadOnlyViolation, method);
        assert.match((e as ReadOnlyViolation).command, new RegExp(`^${method} `));
        return true;
      });
    }
    assert.equal(zendesk.requests.length, before, 'nothing reached the server');
    assert.equal(client.requests, 0);
    // With a token URL: a POST there passes the guard, a POST anywhere else does not.
    const withToken = new ReadOnlyHttp({ ctx: rc().ctx, authorization: async () => 'Bearer x', tokenUrl: `${helpScout.url}/v2/oauth2/token` });
    const hsBefore = helpScout.requests.length;
    await assert.rejects(
      withToken.send('POST', `${helpScout.url}/v2/conversations`, { bucket: { name: 't', perMinute: 100 }, body: '{}' }),
      (e: unknown) => e instanceof ReadOnlyViolation,
    );
    await assert.rejects(
      withToken.send('POST', `${helpScout.url}/v2/oauth2/token?x=1`, { bucket: { name: 't', perMinute: 100 }, body: '' }),
      (e: unknown) => e instanceof ReadOnlyViolation,
    );
    assert.equal(helpScout.requests.length, hsBefore);
    const allowed = await withToken.send('POST', `${helpScout.url}/v2/oauth2/token`, {
      bucket: { name: 't', perMinute: 100 },
      body: 'grant_type=client_credentials',
      auth: false,
    });
    assert.equal(allowed.status, 401, 'the token POST was sent (and refused by the fake for lack of credentials)');
    assert.deepEqual(
      helpScout.requests.slice(hsBefore).map((r) => `${r.method} ${r.path}`),
      ['POST /v2/oauth2/token'],
    );
  });

  test('429 with Retry-After is waited out and reported; the per-minute limit makes the client wait', async () => {
    const { zendesk, helpScout, rc } = scene();
    helpScout.conversations = [];
    const waits: HttpWait[] = [];
    const reader = new HelpScoutReader(rc(), { appId: helpScout.appId, appSecret: helpScout.appSecret }, (w) => {
      waits.push(w);
    });
    helpScout.throttleNext(1, '1', /^\/v2\/conversations$/);
    const started = Date.now();
    assert.equal(await reader.ticketCount(), 0);
    assert.ok(Date.now() - started >= 900, 'waited the second the provider asked for');
    assert.deepEqual(waits, [{ seconds: 1, reason: 'retry_after', bucket: 'help_scout' }]);
    // A Retry-After longer than the client waits inline: a provider limit (the migration pauses and retries later).
    helpScout.throttleNext(1, '3600', /^\/v2\/conversations$/);
    await assert.rejects(reader.ticketCount(), (e: unknown) => e instanceof SourceError && e.failure === 'provider_limit');
    // The sliding minute: with 2 a minute, the third request waits (the sleep is observed, not slept).
    const slept: number[] = [];
    const limited = new ReadOnlyHttp({
      ctx: rc().ctx,
      authorization: async () => 'Basic x',
      onWait: (w) => {
        waits.push(w);
      },
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    const bucket = { name: 'zendesk_export', perMinute: 2 };
    for (let i = 0; i < 3; i++) await (await limited.send('GET', `${zendesk.url}/api/v2/users/me.json`, { bucket })).text();
    assert.equal(slept.length, 1);
    assert.ok(slept[0] > 55_000 && slept[0] <= 60_000, String(slept[0]));
    assert.equal(waits.at(-1)?.reason, 'rate_limit');
  });
});
