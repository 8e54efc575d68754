import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startOfNextUtcDay } from '../../src/broadcasts/governance.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
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
import { runSvc, type TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

describe('broadcast governance', () => {
  let s: TestServer;
  let sink: SmtpSink;
  let operator: SmtpSink;
  let aws: AwsFake;
  let clock: ManualClock;
  let bench: BroadcastBench;
  const svc = (args: string[]) => runSvc(args, { env: s.env });

  before(async () => {
    bench = await startBroadcastServer({ aws: true, env: { SVC_SIGNUP: 'open', SVC_BROADCAST_DAILY_RECIPIENTS: '800' } });
    ({ s, sink, operator, clock } = bench);
    aws = bench.aws!;
  });
  after(() => bench.close());

  async function workspace(origin: 'bootstrap' | 'signup'): Promise<Seed> {
    const seed = await seedWorkspace(s.app, { origin });
    await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
    return seed;
  }
  const governance = async (seed: Seed, token = seed.apiKey) => (await s.request('GET', '/v1/workspace/broadcasts', { token })).body;
  async function nextDay() {
    clock.set(startOfNextUtcDay(clock.now()).getTime() + MINUTE);
  }

  test('approval flow: request, deny, ask again, approve; bootstrap workspaces are allowed', async () => {
    const seed = await workspace('signup');
    assert.equal((await governance(seed)).status, 'approval_required');
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(2, 'ap'));
    const refused = await schedule(s, seed.apiKey, b.id);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'broadcasts_not_approved');

    const request = { website: 'https://shop.example', senders: 'our shop team: monthly product news', consent: 'double opt-in on the website' };
    const byKey = await s.request('POST', '/v1/workspace/broadcasts/approval-request', { token: seed.apiKey, body: request });
    assert.equal(byKey.status, 403);
    const asked = await s.request('POST', '/v1/workspace/broadcasts/approval-request', { token: seed.ownerToken, body: request });
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    assert.equal(asked.body.status, 'approval_requested');
    assert.equal((await schedule(s, seed.apiKey, b.id)).body.error.code, 'broadcasts_not_approved');

    const long = await svc(['workspace', 'broadcasts', 'deny', '--workspace', seed.workspaceId, '--reason', 'x'.repeat(501)]);
    assert.equal(long.code, 2);
    const denied = await svc(['workspace', 'broadcasts', 'deny', '--workspace', seed.workspaceId, '--reason', 'tell us how people signed up']);
    assert.equal(denied.code, 0, denied.stderr);
    const afterDeny = await governance(seed, seed.ownerToken);
    assert.equal(afterDeny.status, 'denied');
    assert.equal(afterDeny.reason, 'tell us how people signed up');
    assert.equal((await schedule(s, seed.apiKey, b.id)).body.error.code, 'broadcasts_not_approved');
    const again = await s.request('POST', '/v1/workspace/broadcasts/approval-request', {
      token: seed.ownerToken,
      body: { ...request, consent: 'double opt-in; confirmation mail kept' },
    });
    assert.equal(again.body.status, 'approval_requested');

    const approved = await svc(['workspace', 'broadcasts', 'approve', '--workspace', seed.workspaceId]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal((await governance(seed)).status, 'approved');
    assert.equal((await schedule(s, seed.apiKey, b.id)).status, 200);
    await s.app.jobs.drain();
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).status, 'sent');

    const boot = await workspace('bootstrap');
    assert.equal((await governance(boot)).status, 'allowed');

    // The operator digest carries both requests, in one mail, without recipient addresses.
    clock.advance(5 * MINUTE);
    await s.app.jobs.drain();
    const mails = await operator.waitFor(1);
    const text = mails.map((m) => m.parsed.text).join('\n');
    assert.match(text, /Broadcast approval requested \(2\)/);
    assert.match(text, /double opt-in on the website/);
    assert.match(text, /https:\/\/shop\.example/);
    assert.ok(!text.includes('rcpt.example.org'));
  });

  test('suspend pauses running broadcasts and refuses scheduling and resuming; approve lifts it, paused stay paused', async () => {
    const seed = await workspace('bootstrap');
    const running = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(600, 'su'));
    await schedule(s, seed.apiKey, running.id);
    await s.app.jobs.drain();
    let b = await getBroadcast(s, seed.apiKey, running.id);
    assert.equal(b.counts.sent, 500);
    assert.equal(b.status, 'sending');
    assert.ok(b.continues_at, 'waits for tomorrow’s allowance');
    const draft = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(1, 'su2'));

    const suspended = await svc(['workspace', 'broadcasts', 'suspend', '--workspace', seed.workspaceId, '--reason', 'complaints from a mailbox provider']);
    assert.equal(suspended.code, 0, suspended.stderr);
    assert.match(suspended.stderr, /1 running broadcast\(s\) paused/);
    b = await getBroadcast(s, seed.apiKey, running.id);
    assert.equal(b.status, 'paused');
    assert.equal(b.pause_reason, 'workspace_suspended');
    const gov = await governance(seed, seed.ownerToken);
    assert.equal(gov.status, 'suspended');
    assert.equal(gov.suspended_by, 'operator');
    assert.equal(gov.reason, 'complaints from a mailbox provider');
    for (const r of [await schedule(s, seed.apiKey, draft.id), await s.request('POST', `/v1/broadcasts/${running.id}/resume`, { token: seed.apiKey })]) {
      assert.equal(r.status, 409);
      assert.equal(r.body.error.code, 'broadcasts_suspended');
    }
    const ask = await s.request('POST', '/v1/workspace/broadcasts/approval-request', {
      token: seed.ownerToken,
      body: { website: 'https://x.example', senders: 'us', consent: 'opt-in' },
    });
    assert.equal(ask.status, 409);

    await nextDay();
    await s.app.jobs.drain();
    assert.equal((await getBroadcast(s, seed.apiKey, running.id)).counts.sent, 500, 'nothing is sent while suspended');
    assert.equal((await svc(['workspace', 'broadcasts', 'approve', '--workspace', seed.workspaceId])).code, 0);
    await s.app.jobs.drain();
    b = await getBroadcast(s, seed.apiKey, running.id);
    assert.equal(b.status, 'paused', 'paused broadcasts stay paused after approval');
    assert.equal((await s.request('POST', `/v1/broadcasts/${running.id}/resume`, { token: seed.apiKey })).status, 200);
    await s.app.jobs.drain();
    b = await getBroadcast(s, seed.apiKey, running.id);
    assert.equal(b.status, 'sent');
    assert.equal(b.counts.sent, 600);

    const show = await svc(['workspace', 'broadcasts', 'show', '--workspace', seed.workspaceId]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^status\tapproved$/m);
    assert.match(show.stdout, /^last 30 days\t600 sent/m);
    assert.match(show.stdout, /^sender domains\texample\.com$/m);
    assert.ok(show.stdout.includes(running.id));
    assert.ok(!show.stdout.includes('rcpt.example.org'));
  });

  test('warm-up: 500 on the first day, doubled after a clean day, kept after a dirty one; the smallest of three limits applies', async () => {
    const seed = await workspace('bootstrap');
    let gov = await governance(seed);
    assert.deepEqual(gov.daily.parts, { workspace: null, server: 800, warmup: 500 });
    assert.equal(gov.daily.limit, 500);

    // Day 1: a broadcast larger than the allowance sends 500 and continues the next day.
    const a = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(700, 'wa'));
    await schedule(s, seed.apiKey, a.id);
    await s.app.jobs.drain();
    assert.equal((await getBroadcast(s, seed.apiKey, a.id)).counts.sent, 500);
    assert.equal((await governance(seed)).daily.remaining, 0);

    // Day 2: day 1 was clean, so the warm-up doubles to 1,000; the server's 800 is the smallest.
    await nextDay();
    await s.app.jobs.drain();
    assert.equal((await getBroadcast(s, seed.apiKey, a.id)).status, 'sent');
    gov = await governance(seed);
    assert.deepEqual(gov.daily.parts, { workspace: null, server: 800, warmup: 1000 });
    assert.equal(gov.daily.limit, 800);
    assert.equal(gov.daily.reserved, 200);
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(800, 'wb'));
    const count = sink.messages.length;
    await schedule(s, seed.apiKey, b.id);
    await s.app.jobs.drain();
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).counts.sent, 600);
    // One spam complaint among the day's 800 mails (0.125 %) makes the day dirty.
    const mail = (await sink.waitFor(count + 600))[count];
    const complaint = sesNotification('Complaint', {
      recipient: mail.to[0],
      headers: [{ name: 'X-Svc-Broadcast', value: rawHeader(mail, 'x-svc-broadcast')! }],
    });
    assert.equal((await postSns(s, aws.sns.notification(TOPIC, complaint))).status, 200);
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).counts.complained, 1);

    // Day 3: the warm-up stays at 1,000. The workspace limit of 300 is now the smallest.
    await nextDay();
    await s.app.jobs.drain();
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).status, 'sent');
    assert.equal((await governance(seed)).daily.parts.warmup, 1000);
    assert.equal((await svc(['workspace', 'broadcasts', 'limit', '--workspace', seed.workspaceId, '--daily', '300'])).code, 0);
    gov = await governance(seed);
    assert.deepEqual(gov.daily.parts, { workspace: 300, server: 800, warmup: 1000 });
    assert.equal(gov.daily.limit, 300);
    const c = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(500, 'wc'));
    await schedule(s, seed.apiKey, c.id);
    await s.app.jobs.drain();
    assert.equal((await getBroadcast(s, seed.apiKey, c.id)).counts.sent, 100);
    // 0 removes the workspace limit only.
    assert.equal((await svc(['workspace', 'broadcasts', 'limit', '--workspace', seed.workspaceId, '--daily', '0'])).code, 0);
    gov = await governance(seed);
    assert.deepEqual(gov.daily.parts, { workspace: null, server: 800, warmup: 1000 });
    const bad = await svc(['workspace', 'broadcasts', 'limit', '--workspace', seed.workspaceId, '--daily', '-3']);
    assert.equal(bad.code, 2);

    // Day 4: day 3 used less than half of its warm-up allowance, so it was not clean either.
    await nextDay();
    await s.app.jobs.drain();
    assert.equal((await governance(seed)).daily.parts.warmup, 1000);
    // Day 5: day 4 sent c's remaining 400 of 1,000 (under half) — still 1,000; a clean full day doubles it.
    const d = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(400, 'wd'));
    await schedule(s, seed.apiKey, d.id);
    await s.app.jobs.drain();
    await nextDay();
    assert.equal((await governance(seed)).daily.parts.warmup, 2000);
  });
  test('a broadcast waiting for tomorrow’s allowance sends at once when resumed after the limit is lifted', async () => {
    const seed = await workspace('bootstrap');
    assert.equal((await svc(['workspace', 'broadcasts', 'limit', '--workspace', seed.workspaceId, '--daily', '2'])).code, 0);
    const br = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(3, 'rs'));
    await schedule(s, seed.apiKey, br.id);
    await s.app.jobs.drain();
    let b = await getBroadcast(s, seed.apiKey, br.id);
    assert.equal(b.counts.sent, 2);
    assert.equal(b.continues_at, startOfNextUtcDay(clock.now()).toISOString());

    assert.equal((await svc(['workspace', 'broadcasts', 'suspend', '--workspace', seed.workspaceId, '--reason', 'checking'])).code, 0);
    assert.equal((await getBroadcast(s, seed.apiKey, br.id)).status, 'paused');
    assert.equal((await svc(['workspace', 'broadcasts', 'approve', '--workspace', seed.workspaceId])).code, 0);
    assert.equal((await svc(['workspace', 'broadcasts', 'limit', '--workspace', seed.workspaceId, '--daily', '0'])).code, 0);
    assert.equal((await governance(seed)).daily.remaining, 498);

    const resumed = await s.request('POST', `/v1/broadcasts/${br.id}/resume`, { token: seed.apiKey });
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    assert.equal(resumed.body.status, 'sending');
    assert.equal(resumed.body.continues_at, null);
    // The same day: the allowance allows it, so it is sent now, not after midnight.
    await s.app.jobs.drain();
    b = await getBroadcast(s, seed.apiKey, br.id);
    assert.equal(b.status, 'sent');
    assert.equal(b.counts.sent, 3);
  });
});
