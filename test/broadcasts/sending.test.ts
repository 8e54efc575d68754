import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY, type ManualClock, MINUTE } from '../../src/platform/clock.js';
import {
  addresses,
  type BroadcastBench,
  createBroadcast,
  getBroadcast,
  rawHeader,
  schedule,
  startBroadcastServer,
  unsubscribeLink,
} from '../helpers/broadcasts.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, ingressPort, seedEmailChannel, sendToIngress } from '../helpers/mail.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

const FORWARDING = 'fwd.example.test';

describe('broadcast sending', () => {
  let s: TestServer;
  let sink: SmtpSink;
  let operator: SmtpSink;
  let seed: Seed;
  let clock: ManualClock;
  let bench: BroadcastBench;

  before(async () => {
    bench = await startBroadcastServer({
      env: { SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_FORWARDING_DOMAIN: FORWARDING, SVC_BROADCAST_DAILY_RECIPIENTS: '300' },
    });
    ({ s, sink, operator, clock } = bench);
    seed = await seedWorkspace(s.app);
    await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
  });
  after(() => bench.close());

  test('a draft de-duplicates its recipients, sends with one-click unsubscribe and a VERP return path, and counts', async () => {
    const contact = await s.request('POST', '/v1/contacts', {
      token: seed.apiKey,
      body: { name: 'Carol', emails: ['carol@rcpt.example.org', 'carol2@rcpt.example.org'] },
    });
    assert.equal(contact.status, 201, JSON.stringify(contact.body));
    const created = await s.request('POST', '/v1/broadcasts', {
      token: seed.apiKey,
      body: {
        inbox_id: seed.inboxId,
        subject: 'Spring news',
        text: 'Hi! Leave: {{unsubscribe_url}}',
        html: '<p>Hi</p>',
        recipients: {
          emails: ['Ann@Rcpt.example.org', 'ann@rcpt.example.org', 'bob@rcpt.example.org', 'carol@rcpt.example.org'],
          contact_ids: [contact.body.id],
        },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.status, 'draft');
    assert.equal(created.body.counts.recipients, 3);
    const more = await s.request('POST', `/v1/broadcasts/${created.body.id}/recipients`, {
      token: seed.apiKey,
      body: { emails: ['bob@rcpt.example.org', 'dan@rcpt.example.org'] },
    });
    assert.deepEqual(more.body, { added: 1, recipients: 4 });
    const bad = await s.request('POST', `/v1/broadcasts/${created.body.id}/recipients`, {
      token: seed.apiKey,
      body: { emails: ['eve@rcpt.example.org', 'not an address'] },
    });
    assert.equal(bad.status, 400);
    assert.equal((await getBroadcast(s, seed.apiKey, created.body.id)).counts.recipients, 4);

    const before = sink.messages.length;
    const scheduled = await schedule(s, seed.apiKey, created.body.id);
    assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
    assert.equal(scheduled.body.status, 'scheduled');
    await s.app.jobs.drain();
    const mails = (await sink.waitFor(before + 4)).slice(before);
    assert.deepEqual(mails.map((m) => m.to[0]).sort(), ['ann@rcpt.example.org', 'bob@rcpt.example.org', 'carol@rcpt.example.org', 'dan@rcpt.example.org']);
    for (const m of mails) {
      const url = unsubscribeLink(m);
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/v1\/unsubscribe\/bc_[0-9a-z]{26}-\d+-[0-9a-z]{12}$/);
      assert.equal(rawHeader(m, 'list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
      const token = url.slice(url.lastIndexOf('/') + 1);
      assert.equal(m.parsed.headers.get('x-svc-broadcast'), token);
      assert.equal(m.parsed.messageId, `<${token}@${'example.com'}>`);
      assert.equal(m.from, `b-${token}@${FORWARDING}`);
      assert.ok(m.parsed.text!.includes(url), 'the text has the recipient’s own link');
      assert.equal(m.parsed.subject, 'Spring news');
    }
    const done = await getBroadcast(s, seed.apiKey, created.body.id);
    assert.equal(done.status, 'sent');
    assert.deepEqual(done.counts, { recipients: 4, pending: 0, sent: 4, failed: 0, suppressed: 0, bounced: 0, complained: 0, unsubscribed: 0 });
    // Nothing is sent twice.
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before + 4);

    // One-click unsubscribe works without signing in; a GET only shows the button.
    const annMail = mails.find((m) => m.to[0] === 'ann@rcpt.example.org')!;
    // SVC_PUBLIC_URL names the configured port (0 here); the test server listens on another.
    const annUrl = unsubscribeLink(annMail).replace(/^http:\/\/[^/]+/, s.url);
    const page = await fetch(annUrl);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<form method="post"/);
    assert.equal((await getBroadcast(s, seed.apiKey, created.body.id)).counts.unsubscribed, 0);
    const click = await fetch(annUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    assert.equal(click.status, 200);
    const again = await fetch(annUrl, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    assert.equal(again.status, 200);
    assert.equal((await getBroadcast(s, seed.apiKey, created.body.id)).counts.unsubscribed, 1);
    const forged = await fetch(annUrl.replace(/-[0-9a-z]{12}$/, '-aaaaaaaaaaaa'), { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    assert.equal(forged.status, 404);

    // The next broadcast skips the unsubscribed address.
    const second = await createBroadcast(s, seed.apiKey, seed.inboxId, ['ann@rcpt.example.org', 'bob@rcpt.example.org']);
    assert.equal((await schedule(s, seed.apiKey, second.id)).status, 200);
    const count = sink.messages.length;
    await s.app.jobs.drain();
    await sink.waitFor(count + 1);
    assert.deepEqual(
      sink.messages.slice(count).map((m) => m.to[0]),
      ['bob@rcpt.example.org'],
    );
    const secondDone = await getBroadcast(s, seed.apiKey, second.id);
    assert.equal(secondDone.status, 'sent');
    assert.equal(secondDone.counts.suppressed, 1);
    assert.equal(secondDone.counts.sent, 1);
    const listed = await s.request('GET', `/v1/broadcasts/${second.id}/recipients?status=suppressed`, { token: seed.apiKey });
    assert.deepEqual(
      listed.body.data.map((r: { email: string }) => r.email),
      ['ann@rcpt.example.org'],
    );
  });

  test('more recipients than SVC_BROADCAST_DAILY_RECIPIENTS answers 422 hosted_limit and changes nothing', async () => {
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(300, 'lim'));
    const r = await s.request('POST', `/v1/broadcasts/${b.id}/recipients`, { token: seed.apiKey, body: { emails: ['one-more@rcpt.example.org'] } });
    assert.equal(r.status, 422);
    assert.equal(r.body.error.code, 'hosted_limit');
    assert.equal(r.body.error.limit, 'SVC_BROADCAST_DAILY_RECIPIENTS');
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).counts.recipients, 300);
    const create = await s.request('POST', '/v1/broadcasts', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, subject: 'x', text: 'y', recipients: { emails: addresses(301, 'lim2') } },
    });
    assert.equal(create.status, 422);
    assert.equal(create.body.error.limit, 'SVC_BROADCAST_DAILY_RECIPIENTS');
    const cancel = await s.request('POST', `/v1/broadcasts/${b.id}/cancel`, { token: seed.apiKey });
    assert.equal(cancel.body.status, 'cancelled');
  });

  test('state refusals, pause, resume and cancel', async () => {
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(3, 'st'));
    const pauseDraft = await s.request('POST', `/v1/broadcasts/${b.id}/pause`, { token: seed.apiKey });
    assert.equal(pauseDraft.status, 409);
    assert.equal(pauseDraft.body.error.code, 'broadcast_state');
    assert.equal(pauseDraft.body.error.status, 'draft');
    const empty = await s.request('POST', '/v1/broadcasts', { token: seed.apiKey, body: { inbox_id: seed.inboxId, subject: 'x', text: 'y' } });
    const noRecipients = await schedule(s, seed.apiKey, empty.body.id);
    assert.equal(noRecipients.status, 409);
    assert.equal(noRecipients.body.error.code, 'no_recipients');

    // Scheduled for later: nothing goes out before then; paused and resumed, it keeps its time.
    const at = new Date(clock.now().getTime() + 2 * 60 * MINUTE).toISOString();
    const later = await schedule(s, seed.apiKey, b.id, { send_at: at });
    assert.equal(later.body.send_at, at);
    const count = sink.messages.length;
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, count);
    assert.equal((await s.request('POST', `/v1/broadcasts/${b.id}/pause`, { token: seed.apiKey })).body.pause_reason, 'manual');
    clock.advance(3 * 60 * MINUTE);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, count);
    const resumed = await s.request('POST', `/v1/broadcasts/${b.id}/resume`, { token: seed.apiKey });
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.pause_reason, null);
    await s.app.jobs.drain();
    await sink.waitFor(count + 3);
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).status, 'sent');
    const cancelSent = await s.request('POST', `/v1/broadcasts/${b.id}/cancel`, { token: seed.apiKey });
    assert.equal(cancelSent.status, 409);

    // An agent has no broadcasts:manage.
    const list = await s.request('GET', '/v1/broadcasts?limit=2', { token: seed.apiKey });
    assert.equal(list.body.data.length, 2);
    assert.ok(list.body.next_cursor);
  });

  test('refused recipients fail (5.1.x ones are suppressed), deferred ones are retried later', async () => {
    sink.rejectRecipient('gone@rcpt.example.org', { code: 550, text: '5.1.1 no such user' });
    sink.rejectRecipient('busy@rcpt.example.org', { code: 450, text: '4.2.1 try later' });
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, ['gone@rcpt.example.org', 'busy@rcpt.example.org', 'fine@rcpt.example.org']);
    await schedule(s, seed.apiKey, b.id);
    const count = sink.messages.length;
    await s.app.jobs.drain();
    await sink.waitFor(count + 1);
    let now = await getBroadcast(s, seed.apiKey, b.id);
    assert.equal(now.status, 'sending');
    assert.deepEqual([now.counts.sent, now.counts.failed, now.counts.pending], [1, 1, 1]);
    const failed = await s.request('GET', `/v1/broadcasts/${b.id}/recipients?status=failed`, { token: seed.apiKey });
    assert.match(failed.body.data[0].error, /5\.1\.1/);
    assert.ok(!failed.body.data[0].error.includes('gone@'), 'no addresses in errors');
    sink.rejectRecipient('busy@rcpt.example.org', null);
    clock.advance(5 * MINUTE);
    await s.app.jobs.drain();
    await sink.waitFor(count + 2);
    now = await getBroadcast(s, seed.apiKey, b.id);
    assert.equal(now.status, 'sent');
    assert.deepEqual([now.counts.sent, now.counts.failed], [2, 1]);
    // gone@ is suppressed for the workspace now.
    const next = await createBroadcast(s, seed.apiKey, seed.inboxId, ['gone@rcpt.example.org']);
    await schedule(s, seed.apiKey, next.id);
    await s.app.jobs.drain();
    assert.equal((await getBroadcast(s, seed.apiKey, next.id)).counts.suppressed, 1);
  });

  test('a sender error is retried, then pauses the broadcast with its reason and tells the operator', async () => {
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(2, 'se'));
    sink.failWith(451);
    await schedule(s, seed.apiKey, b.id);
    const count = sink.messages.length;
    await s.app.jobs.drain();
    let now = await getBroadcast(s, seed.apiKey, b.id);
    assert.equal(now.status, 'sending');
    assert.equal(now.counts.pending, 2);
    for (const wait of [1, 5, 15]) {
      clock.advance(wait * MINUTE);
      await s.app.jobs.drain();
    }
    now = await getBroadcast(s, seed.apiKey, b.id);
    assert.equal(now.status, 'paused');
    assert.equal(now.pause_reason, 'sender_error');
    assert.match(now.pause_detail!, /451/);
    assert.equal(sink.messages.length, count);
    assert.ok(s.logs.some((l) => l.msg === 'broadcast send failed, retrying'));
    // The allowance taken for the refused attempts was given back.
    const gov = await s.request('GET', '/v1/workspace/broadcasts', { token: seed.apiKey });
    const reservedBefore = gov.body.daily.reserved;
    sink.failWith(null);
    const resumed = await s.request('POST', `/v1/broadcasts/${b.id}/resume`, { token: seed.apiKey });
    assert.equal(resumed.status, 200);
    await s.app.jobs.drain();
    await sink.waitFor(count + 2);
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).status, 'sent');
    assert.equal((await s.request('GET', '/v1/workspace/broadcasts', { token: seed.apiKey })).body.daily.reserved, reservedBefore + 2);
    clock.advance(5 * MINUTE);
    await s.app.jobs.drain();
    const digest = (await operator.waitFor(1)).map((m) => m.parsed.text ?? '').join('\n');
    assert.match(digest, new RegExp(`Broadcast paused[\\s\\S]*${b.id}[\\s\\S]*sender_error`));
    assert.ok(!/rcpt\.example\.org/.test(digest), 'no recipient addresses in the digest');
  });

  test('a login refused by the channel’s server pauses at once', async () => {
    const seed2 = await seedWorkspace(s.app);
    await seedEmailChannel(s.app, seed2, { smtpPort: sink.port, password: 'wrong-password' });
    const b = await createBroadcast(s, seed2.apiKey, seed2.inboxId, addresses(2, 'auth'));
    await schedule(s, seed2.apiKey, b.id);
    await s.app.jobs.drain();
    const now = await getBroadcast(s, seed2.apiKey, b.id);
    assert.equal(now.status, 'paused');
    assert.equal(now.pause_reason, 'sender_error');
    assert.ok(!now.pause_detail!.includes('wrong-password'));
  });

  test('recipients left `sending` by a crash are sent once when the job comes back', async () => {
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(5, 'crash'));
    await schedule(s, seed.apiKey, b.id);
    await s.app.db.updateTable('broadcasts').set({ status: 'sending' }).where('id', '=', b.id).execute();
    await s.app.db.updateTable('broadcast_recipients').set({ status: 'sending', attempts: 1 }).where('broadcast_id', '=', b.id).where('seq', '<=', 2).execute();
    const count = sink.messages.length;
    await s.app.jobs.drain();
    await sink.waitFor(count + 5);
    await s.app.jobs.drain();
    const to = sink.messages
      .slice(count)
      .map((m) => m.to[0])
      .sort();
    assert.deepEqual(to, addresses(5, 'crash').sort());
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).counts.sent, 5);
  });

  test('a delivery report to the return path records a permanent bounce; a delayed one changes nothing', async () => {
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, ['bouncy@rcpt.example.org', 'slow@rcpt.example.org', 'angry@rcpt.example.org']);
    await schedule(s, seed.apiKey, b.id);
    const count = sink.messages.length;
    await s.app.jobs.drain();
    const mails = (await sink.waitFor(count + 3)).slice(count);
    const report = (to: string, action: string, status: string, original: string) =>
      [
        'From: Mail Delivery System <MAILER-DAEMON@mx.rcpt.example.org>',
        `To: ${to}`,
        'Subject: Undelivered Mail Returned to Sender',
        'MIME-Version: 1.0',
        'Content-Type: multipart/report; report-type=delivery-status; boundary="R"',
        '',
        '--R',
        'Content-Type: text/plain',
        '',
        'Your message could not be delivered.',
        '--R',
        'Content-Type: message/delivery-status',
        '',
        'Reporting-MTA: dns; mx.rcpt.example.org',
        '',
        `Final-Recipient: rfc822; ${original}`,
        `Action: ${action}`,
        `Status: ${status}`,
        '',
        '--R--',
        '',
      ].join('\r\n');
    const bouncy = mails.find((m) => m.to[0] === 'bouncy@rcpt.example.org')!;
    const slow = mails.find((m) => m.to[0] === 'slow@rcpt.example.org')!;
    const angry = mails.find((m) => m.to[0] === 'angry@rcpt.example.org')!;
    const port = ingressPort(s);
    await sendToIngress(port, { envelope: { from: '', to: [bouncy.from] }, raw: report(bouncy.from, 'failed', '5.1.1', 'bouncy@rcpt.example.org') });
    await sendToIngress(port, { envelope: { from: '', to: [slow.from] }, raw: report(slow.from, 'delayed', '4.4.1', 'slow@rcpt.example.org') });
    // A spam report (ARF) through the return path counts as a complaint.
    const arf = [
      'From: fbl@isp.example',
      `To: ${angry.from}`,
      'Subject: complaint',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=feedback-report; boundary="F"',
      '',
      '--F',
      'Content-Type: text/plain',
      '',
      'A complaint.',
      '--F',
      'Content-Type: message/feedback-report',
      '',
      'Feedback-Type: abuse',
      'User-Agent: isp/1.0',
      'Version: 1',
      '',
      '--F',
      'Content-Type: text/rfc822-headers',
      '',
      `Message-ID: ${angry.parsed.messageId}`,
      '',
      '--F--',
      '',
    ].join('\r\n');
    await sendToIngress(port, { envelope: { from: '', to: [angry.from] }, raw: arf });
    // The same bounce again is counted once; a made-up return path is refused.
    await sendToIngress(port, { envelope: { from: '', to: [bouncy.from] }, raw: report(bouncy.from, 'failed', '5.1.1', 'bouncy@rcpt.example.org') });
    await assert.rejects(
      sendToIngress(port, { envelope: { from: '', to: [bouncy.from.replace(/-[0-9a-z]{12}@/, '-aaaaaaaaaaaa@')] }, raw: report('x', 'failed', '5.1.1', 'x') }),
      /550/,
    );
    const now = await getBroadcast(s, seed.apiKey, b.id);
    assert.equal(now.counts.bounced, 1);
    assert.equal(now.counts.complained, 1);
    const suppressed = await s.app.db
      .selectFrom('broadcast_suppressions')
      .select(['email', 'reason'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('email', 'in', ['bouncy@rcpt.example.org', 'slow@rcpt.example.org', 'angry@rcpt.example.org'])
      .orderBy('email')
      .execute();
    assert.deepEqual(suppressed, [
      { email: 'angry@rcpt.example.org', reason: 'complained' },
      { email: 'bouncy@rcpt.example.org', reason: 'bounced' },
    ]);
    // Reports are not conversations.
    const convs = await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(convs.length, 0);
  });

  test('retention deletes recipients 400 days after a broadcast finished (counts stay) and daily totals after 90 days', async () => {
    const { retentionRules } = await import('../../src/lifecycle/registry.js');
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(3, 'ret'));
    await schedule(s, seed.apiKey, b.id);
    await s.app.jobs.drain();
    const rule = (name: string) => retentionRules.find((r) => r.name === name)!;
    const runAll = async (name: string, at: Date) => {
      let total = 0;
      for (let n = await rule(name).deleteBatch(s.app, at, 2); n > 0; n = await rule(name).deleteBatch(s.app, at, 2)) total += n;
      return total;
    };
    const recipients = () => s.app.db.selectFrom('broadcast_recipients').select('seq').where('broadcast_id', '=', b.id).execute();
    await runAll('broadcast_recipients', new Date(clock.now().getTime() + 399 * DAY));
    assert.equal((await recipients()).length, 3);
    await runAll('broadcast_recipients', new Date(clock.now().getTime() + 401 * DAY));
    assert.equal((await recipients()).length, 0);
    const kept = await getBroadcast(s, seed.apiKey, b.id);
    assert.equal(kept.counts.recipients, 3);
    assert.equal(kept.counts.sent, 3);
    const days = () => s.app.db.selectFrom('broadcast_daily_totals').select('day').where('workspace_id', '=', seed.workspaceId).execute();
    assert.ok((await days()).length > 0);
    await runAll('broadcast_daily_totals', new Date(clock.now().getTime() + 89 * DAY));
    assert.ok((await days()).length > 0);
    await runAll('broadcast_daily_totals', new Date(clock.now().getTime() + 92 * DAY));
    assert.equal((await days()).length, 0);
  });
});
