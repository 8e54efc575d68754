import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { utcDay } from '../../src/broadcasts/governance.js';
import { DAY, type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { type AwsFake, sesNotification } from '../helpers/aws.js';
import {
  addresses,
  type BroadcastBench,
  createBroadcast,
  getBroadcast,
  postSns,
  rawHeader,
  schedule,
  startBroadcastServer,
  TOPIC,
} from '../helpers/broadcasts.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import type { TestServer } from '../helpers/server.js';
import type { CaughtMail, SmtpSink } from '../helpers/smtp-sink.js';

describe('bounce and complaint feedback', () => {
  let s: TestServer;
  let sink: SmtpSink;
  let operator: SmtpSink;
  let aws: AwsFake;
  let clock: ManualClock;
  let bench: BroadcastBench;

  before(async () => {
    bench = await startBroadcastServer({ aws: true, env: { SVC_MAILER_TOPIC_ARNS: `${TOPIC},arn:aws:sns:eu-west-1:123456789012:other-accepted` } });
    ({ s, sink, operator, clock } = bench);
    aws = bench.aws!;
  });
  after(() => bench.close());

  /** A workspace that sent a broadcast to `n` recipients; returns the mails. */
  async function sent(n: number, prefix: string): Promise<{ seed: Seed; id: string; mails: CaughtMail[] }> {
    const seed = await seedWorkspace(s.app);
    await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(n, prefix));
    const count = sink.messages.length;
    assert.equal((await schedule(s, seed.apiKey, b.id)).status, 200);
    await s.app.jobs.drain();
    const mails = (await sink.waitFor(count + n)).slice(count).filter((m) => m.to[0].startsWith(prefix));
    assert.equal(mails.length, n);
    return { seed, id: b.id, mails };
  }
  const header = (m: CaughtMail) => [{ name: 'X-Svc-Broadcast', value: rawHeader(m, 'x-svc-broadcast')! }];
  async function report(kind: 'Bounce' | 'Complaint', m: CaughtMail, opts: Parameters<typeof sesNotification>[1] extends infer O ? Partial<O> : never = {}) {
    const r = await postSns(s, aws.sns.notification(TOPIC, sesNotification(kind, { recipient: m.to[0], headers: header(m), ...opts })));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.result as string;
  }
  /** Mails sent earlier in the last 30 days (history the suspension rule looks at). */
  async function history(workspaceId: string, sentCount: number, bounced: number, complained: number) {
    await s.app.db
      .insertInto('broadcast_daily_totals')
      .values({ workspace_id: workspaceId, day: utcDay(clock.now().getTime() - 3 * DAY), reserved: sentCount, sent: sentCount, bounced, complained })
      .execute();
  }
  const status = async (seed: Seed) => (await s.request('GET', '/v1/workspace/broadcasts', { token: seed.apiKey })).body;

  test('signed SES notifications record bounces and complaints (SignatureVersion 1 and 2, either payload shape)', async () => {
    const { seed, id, mails } = await sent(4, 'fb');
    assert.equal(await report('Bounce', mails[0]), 'bounce');
    assert.equal(await report('Bounce', mails[0]), 'unmatched', 'a repeated notification is counted once');
    assert.equal(await report('Bounce', mails[1], { bounceType: 'Transient' }), 'ignored');
    // Found by the Message-ID (SES commonHeaders) alone, published as a configuration-set event, signed with version 2.
    const v2 = aws.sns.notification(
      TOPIC,
      sesNotification('Complaint', { recipient: mails[2].to[0], commonMessageId: mails[2].parsed.messageId, eventPublishing: true }),
      { version: '2' },
    );
    assert.equal((await postSns(s, v2, 'application/json')).body.result, 'complaint');
    const b = await getBroadcast(s, seed.apiKey, id);
    assert.deepEqual([b.counts.bounced, b.counts.complained], [1, 1]);
    const suppressions = await s.app.db
      .selectFrom('broadcast_suppressions')
      .select(['email', 'reason'])
      .where('workspace_id', '=', seed.workspaceId)
      .orderBy('email')
      .execute();
    assert.deepEqual(suppressions, [
      { email: mails[0].to[0], reason: 'bounced' },
      { email: mails[2].to[0], reason: 'complained' },
    ]);
  });

  test('forged, altered, wrong-topic and foreign-certificate messages are refused and change nothing', async () => {
    const { seed, id, mails } = await sent(1, 'forge');
    const good = aws.sns.notification(TOPIC, sesNotification('Complaint', { recipient: mails[0].to[0], headers: header(mails[0]) }));
    const altered = { ...good, Message: good.Message.replace('abuse', 'fraud') };
    const forged = { ...good, Signature: Buffer.alloc(256, 7).toString('base64') };
    const wrongTopic = aws.sns.notification('arn:aws:sns:us-east-1:999999999999:not-ours', JSON.parse(good.Message));
    const foreignCert = aws.sns.notification(TOPIC, JSON.parse(good.Message), { certUrl: 'https://evil.example.com/SimpleNotificationService-x.pem' });
    const httpCert = aws.sns.notification(TOPIC, JSON.parse(good.Message), { certUrl: 'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem' });
    const unknownVersion = { ...good, SignatureVersion: '3' };
    for (const m of [altered, forged, wrongTopic, foreignCert, httpCert, unknownVersion]) {
      const r = await postSns(s, m);
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'forbidden');
    }
    assert.equal((await postSns(s, 'not json')).status, 400);
    assert.equal((await postSns(s, JSON.stringify({ Type: 'Notification' }))).status, 400);
    assert.equal((await getBroadcast(s, seed.apiKey, id)).counts.complained, 0);
    assert.equal((await postSns(s, good)).body.result, 'complaint');
  });

  test('a subscription is confirmed only for an accepted topic, by visiting its SubscribeURL', async () => {
    const before = aws.sns.confirmed.length;
    const wrong = await postSns(s, aws.sns.subscriptionConfirmation('arn:aws:sns:us-east-1:999999999999:not-ours'));
    assert.equal(wrong.status, 403);
    assert.equal(aws.sns.confirmed.length, before);
    const foreign = await postSns(s, aws.sns.subscriptionConfirmation(TOPIC, { subscribeUrl: 'https://evil.example.com/confirm' }));
    assert.equal(foreign.status, 403);
    const ok = await postSns(s, aws.sns.subscriptionConfirmation(TOPIC));
    assert.equal(ok.status, 200);
    assert.equal(ok.body.result, 'confirmed');
    assert.equal(aws.sns.confirmed.length, before + 1);
    assert.ok(s.logs.some((l) => l.msg === 'sns subscription confirmed' && l.topic_arn === TOPIC));
  });

  test('automatic suspension: 0.3 % complaints among 1,000 mails suspends; 999 mails or 0.29 % does not', async () => {
    // 999 mails, 3 complaints (0.30 %): too few mails.
    const few = await sent(10, 'c999');
    await history(few.seed.workspaceId, 989, 0, 0);
    for (const m of few.mails.slice(0, 3)) await report('Complaint', m);
    assert.equal((await status(few.seed)).status, 'allowed');

    // 10,000 mails, 29 complaints (0.29 %): under the rate.
    const under = await sent(10, 'c029');
    await history(under.seed.workspaceId, 9990, 0, 26);
    for (const m of under.mails.slice(0, 3)) await report('Complaint', m);
    assert.equal((await status(under.seed)).status, 'allowed');
    // The 30th complaint (0.30 %) suspends.
    await report('Complaint', under.mails[3]);
    const suspended = await status(under.seed);
    assert.equal(suspended.status, 'suspended');
    assert.equal(suspended.suspended_by, 'automatic');
    assert.match(suspended.reason, /complaint rate 0\.30 %/);

    // Exactly 1,000 mails with 3 complaints: suspended, and a running broadcast pauses.
    const exact = await sent(10, 'c1000');
    await history(exact.seed.workspaceId, 990, 0, 0);
    const running = await createBroadcast(s, exact.seed.apiKey, exact.seed.inboxId, addresses(1, 'c1000run'));
    await schedule(s, exact.seed.apiKey, running.id, { send_at: new Date(clock.now().getTime() + DAY).toISOString() });
    for (const m of exact.mails.slice(0, 3)) await report('Complaint', m);
    assert.equal((await status(exact.seed)).status, 'suspended');
    const paused = await getBroadcast(s, exact.seed.apiKey, running.id);
    assert.equal(paused.status, 'paused');
    assert.equal(paused.pause_reason, 'workspace_suspended');

    // The digest says so, with the rates.
    clock.advance(5 * MINUTE);
    await s.app.jobs.drain();
    const digest = (await operator.waitFor(1)).map((m) => m.parsed.text).join('\n');
    assert.match(digest, /Workspace suspended from broadcasts/);
    assert.ok(digest.includes(exact.seed.workspaceId) && digest.includes(under.seed.workspaceId));
    assert.match(digest, /complaint rate 0\.30 % \(3\)/);
    assert.ok(!digest.includes('rcpt.example.org'));
  });

  test('automatic suspension: 8 % bounces among 2,000 mails suspends; 1,999 mails or 7.95 % does not', async () => {
    const few = await sent(10, 'b1999');
    await history(few.seed.workspaceId, 1989, 157, 0);
    for (const m of few.mails.slice(0, 3)) await report('Bounce', m);
    assert.equal((await status(few.seed)).status, 'allowed'); // 160 of 1,999

    const under = await sent(10, 'b795');
    await history(under.seed.workspaceId, 1990, 157, 0);
    for (const m of under.mails.slice(0, 2)) await report('Bounce', m);
    assert.equal((await status(under.seed)).status, 'allowed'); // 159 of 2,000 (7.95 %)
    await report('Bounce', under.mails[2]);
    const s2 = await status(under.seed); // 160 of 2,000 (8 %)
    assert.equal(s2.status, 'suspended');
    assert.match(s2.reason, /bounce rate 8\.00 % \(160\)/);
  });

  /** 250 recipients, 210 a day: the broadcast is still running after the first day. */
  async function running(prefix: string) {
    const seed = await seedWorkspace(s.app);
    await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
    await s.app.db
      .insertInto('broadcast_governance')
      .values({
        workspace_id: seed.workspaceId,
        status: null,
        reason: null,
        suspended_by: null,
        suspended_at: null,
        decided_at: null,
        daily_limit: 210,
        warmup_allowance: 500,
        warmup_through_day: null,
        request_email: null,
        request_website: null,
        request_senders: null,
        request_consent: null,
        requested_at: null,
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      })
      .execute();
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(250, prefix));
    const count = sink.messages.length;
    await schedule(s, seed.apiKey, b.id);
    await s.app.jobs.drain();
    const mails = (await sink.waitFor(count + 210)).slice(count);
    return { seed, b, mails };
  }

  test('a broadcast pauses itself at a 0.3 % complaint rate', async () => {
    const { seed, b, mails } = await running('crate');
    await report('Complaint', mails[0]); // 1 of 210 (0.48 %)
    const paused = await getBroadcast(s, seed.apiKey, b.id);
    assert.equal(paused.status, 'paused');
    assert.equal(paused.pause_reason, 'complaint_rate');
    assert.match(paused.pause_detail!, /1 of 210 mails reported as spam/);
  });

  test('a broadcast pauses itself at a 5 % bounce rate, with the reason stored and the operator told', async () => {
    const { seed, b, mails } = await running('rate');
    for (const m of mails.slice(0, 10)) await report('Bounce', m);
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).status, 'sending'); // 10 of 210 (4.76 %)
    await report('Bounce', mails[10]); // 11 of 210 (5.24 %)
    const paused = await getBroadcast(s, seed.apiKey, b.id);
    assert.equal(paused.status, 'paused');
    assert.equal(paused.pause_reason, 'bounce_rate');
    assert.match(paused.pause_detail!, /11 of 210 mails bounced/);
    clock.advance(5 * MINUTE);
    await s.app.jobs.drain();
    const digest = operator.messages.map((m) => m.parsed.text).join('\n');
    assert.match(digest, new RegExp(`Broadcast paused[\\s\\S]*${b.id}: paused itself, reason bounce_rate`));
  });
});
