// Switching delivery against a real Dovecot, the real SMTP ingress and a ManualClock, for
// migrations that do not end by the quiet period: finish refused without a test message is in
// switching.test.ts, finish accepted with force is here, with the sync limit (also while waiting
// for a new password) and the routing options without SVC_FORWARDING_DOMAIN. The scene is
// switching-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ChannelRow } from '../../src/channels/service.js';
import type { Config } from '../../src/config.js';
import { routingOptions } from '../../src/mailbox-migration/switching/service.js';
import { DAY, HOUR, MINUTE } from '../../src/platform/clock.js';
import { dovecotMissing } from '../helpers/dovecot.js';
import { ingressPort, sendToIngress } from '../helpers/mail.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { expectState } from '../helpers/migration.js';
import { sceneOf } from '../helpers/scene.js';
import { FORWARDING_DOMAIN, startSwitchingScene, stopSwitchingScene } from './switching-scene.js';

const FORCE_USER = 'force@acme.test';
const LIMIT_USER = 'limit@acme.test';
const REVOKED_USER = 'revoked@acme.test';

describe('switching: finish with force and the sync limit', { skip: dovecotMissing }, () => {
  const scene = sceneOf(() => startSwitchingScene([FORCE_USER, LIMIT_USER, REVOKED_USER]), stopSwitchingScene);

  before(async () => {
    const { d, now } = scene();
    for (const user of [FORCE_USER, LIMIT_USER, REVOKED_USER]) {
      d.deliver(user, 'INBOX', [
        {
          raw: await buildMail({ from: 'Uma <uma@customer.test>', to: user, subject: `Hello ${user}`, date: daysAgo(now, 1) }),
          flags: 'S',
          receivedAt: daysAgo(now, 1),
        },
      ]);
    }
  });

  test('without SVC_FORWARDING_DOMAIN only the MX way is offered', () => {
    const channel = { address: 'help@shop.test', forwarding_address: `x1@${FORWARDING_DOMAIN}` } as ChannelRow;
    assert.deepEqual(
      routingOptions({ config: { forwardingDomain: undefined } as Config }, channel).ways.map((w) => w.way),
      ['mx'],
    );
    assert.equal(routingOptions({ config: { forwardingDomain: undefined } as Config }, channel).forwarding_address, null);
    assert.deepEqual(
      routingOptions({ config: { forwardingDomain: FORWARDING_DOMAIN } as Config }, channel).ways.map((w) => w.way),
      ['forwarding', 'server_routing', 'mx'],
    );
    // The MX way names the moved mailbox's domain, not the channel's (issue 43 item 11).
    const mx = (source?: string) => routingOptions({ config: { forwardingDomain: undefined } as Config }, channel, source).ways.find((w) => w.way === 'mx');
    assert.equal(mx('Support@Old-Shop.example')?.domain, 'old-shop.example');
    assert.equal(mx()?.domain, 'shop.test', 'no source address: the channel’s domain');
  });

  test('finish with force completes without a test message; mail still reaching only the old mailbox is not copied', async () => {
    const { d, clock, at, api, poll, copies, toSyncing } = scene();
    const forced = await toSyncing(FORCE_USER);
    const r = await api('POST', `/v1/migrations/${forced.id}/finish`, { force: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.state, 'completed');
    assert.equal(r.body.end_reason, 'finish_forced');
    assert.equal(r.body.credentials.set, false);
    d.deliver(FORCE_USER, 'INBOX', [
      {
        raw: await buildMail({ from: 'Vic <vic@customer.test>', to: FORCE_USER, subject: 'Too late', messageId: 'too-late@customer.test', date: clock.now() }),
        receivedAt: at(MINUTE),
      },
    ]);
    await poll();
    assert.equal(await copies('too-late@customer.test'), 0);
  });

  test('the sync limit stops a migration that was never finished and deletes its password', async () => {
    const { d, s, sink, seed, clock, api, drain, toSyncing } = scene();
    const limited = await toSyncing(LIMIT_USER);
    // A test message that arrives at the channel's own address (new MX records) came directly.
    const mailed = sink.messages.length;
    assert.equal((await api('POST', `/v1/migrations/${limited.id}/probe`)).status, 202);
    const probe = (await sink.waitFor(mailed + 1)).at(-1)!;
    assert.deepEqual(probe.to, [LIMIT_USER]);
    assert.match((await sendToIngress(ingressPort(s), { envelope: { from: 'svc@svc.test', to: [LIMIT_USER] }, raw: probe.raw })).response, /^250/);
    assert.equal((await api('GET', `/v1/migrations/${limited.id}`)).body.test_message.route, 'direct');
    // Mail only in the old mailbox every 20 hours keeps the quiet period from passing.
    const stopsAt = new Date((await api('GET', `/v1/migrations/${limited.id}`)).body.sync.stops_at).getTime();
    let day = 0;
    while (clock.now().getTime() < stopsAt - 10 * MINUTE - 20 * HOUR) {
      clock.advance(20 * HOUR);
      d.deliver(LIMIT_USER, 'INBOX', [
        { raw: await buildMail({ from: 'Walt <walt@customer.test>', to: LIMIT_USER, subject: `Day ${day++}`, date: clock.now() }), receivedAt: clock.now() },
      ]);
      await drain();
    }
    clock.set(new Date(stopsAt - 10 * MINUTE));
    await drain();
    await expectState(s, seed.apiKey, limited.id, 'syncing');
    clock.advance(11 * MINUTE);
    await drain();
    const m = await expectState(s, seed.apiKey, limited.id, 'completed');
    assert.equal(m.end_reason, 'sync_limit');
    assert.equal(m.credentials.set, false);
    const row = await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('id', '=', limited.id).executeTakeFirstOrThrow();
    assert.equal(row.password_sealed, null);
    const log = (await api('GET', `/v1/migrations/${limited.id}/activity`)).body.data.map((e: { action: string }) => e.action);
    assert.ok(log.includes('sync_limit_reached'));
  });

  test('a sync waiting for a new password still stops at the sync limit', async () => {
    const { d, s, seed, clock, drain, poll, toSyncing } = scene();
    const revoked = await toSyncing(REVOKED_USER);
    await d.setPassword(REVOKED_USER, 'changed-at-the-provider');
    d.kick(REVOKED_USER);
    await poll();
    const waiting = await expectState(s, seed.apiKey, revoked.id, 'needs_attention');
    assert.equal(waiting.attention.reason, 'login_failed');
    clock.advance(30 * DAY + MINUTE);
    await drain();
    const m = await expectState(s, seed.apiKey, revoked.id, 'completed');
    assert.equal(m.end_reason, 'sync_limit');
    const row = await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('id', '=', revoked.id).executeTakeFirstOrThrow();
    assert.equal(row.password_sealed, null);
  });
});
