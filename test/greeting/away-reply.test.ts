// The out-of-office reply (issue 35): mail that arrives while the inbox is closed by its business
// hours gets one automatic, threaded answer naming the next opening, instead of the greeting; the
// same "never" rules as the greeting, once per contact in 24 hours, a stored job first.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AWAY_JOB } from '../../src/greeting/away-rules.js';
import { HOUR, ManualClock } from '../../src/platform/clock.js';
import { addPerson, type Seed } from '../helpers/fixtures.js';
import { rawMail, startMailingServer } from '../helpers/mail.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'away-secret';
const WORKDAYS = {
  mon: [{ start: '09:00', end: '17:00' }],
  tue: [{ start: '09:00', end: '17:00' }],
  wed: [{ start: '09:00', end: '17:00' }],
  thu: [{ start: '09:00', end: '17:00' }],
  fri: [{ start: '09:00', end: '17:00' }],
};

type Shown = {
  direction: string;
  automatic: boolean;
  details: { away_reply?: boolean; greeting?: boolean; next_opening?: string; locale?: string } | null;
  body: string;
};

describe('out-of-office reply', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let sink: SmtpSink;
  // Saturday 7 November 2026, 13:00 in Istanbul (UTC+3): closed until Monday 09:00 (06:00Z).
  const clock = new ManualClock(new Date('2026-11-07T10:00:00Z'));

  before(async () => {
    ({ s, seed, address, sink } = await startMailingServer({ ingressSecret: SECRET, clock }));
    const tz = await s.request('PATCH', `/v1/inboxes/${seed.inboxId}`, { token: seed.apiKey, body: { timezone: 'Europe/Istanbul' } });
    assert.equal(tz.status, 200, JSON.stringify(tz.body));
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  const away = (body?: unknown) =>
    body === undefined
      ? s.request('GET', `/v1/inboxes/${seed.inboxId}/away-reply`, { token: seed.apiKey })
      : s.request('PATCH', `/v1/inboxes/${seed.inboxId}/away-reply`, { token: seed.apiKey, body });

  async function customerMail(headers: Record<string, string> = {}) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw: rawMail({ To: address, ...headers }), token: SECRET });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data[0] as { conversation_id: string; message_id: string };
  }

  async function automaticIn(conversationId: string) {
    await s.app.jobs.drain();
    const r = await s.request('GET', `/v1/conversations/${conversationId}/messages?order=asc`, { token: seed.apiKey });
    const all = r.body.data as Shown[];
    return { away: all.filter((m) => m.details?.away_reply), greetings: all.filter((m) => m.details?.greeting) };
  }

  test('off by default and held without business hours; validated; only managers change it', async () => {
    const r = await away();
    assert.equal(r.status, 200);
    assert.equal(r.body.enabled, false);
    assert.equal(r.body.held, 'no_schedule');
    assert.match(r.body.text.en, /\{next_opening\}/);
    assert.match(r.body.text.tr, /\{next_opening\}/);

    assert.equal((await away({ enabled: true, text: { tr: ' ' } })).status, 400);
    assert.equal((await away({ enabled: 'yes' })).status, 400);
    assert.equal((await away({ enabled: true, extra: 1 })).status, 400);
    assert.equal((await away()).body.enabled, false, 'a refused change changes nothing');
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const refused = await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/away-reply`, {
      token: agent.token,
      headers: { 'svc-workspace': seed.workspaceId },
      body: { enabled: true },
    });
    assert.equal(refused.status, 403);
    assert.equal(
      (await s.request('GET', `/v1/inboxes/${seed.inboxId}/away-reply`, { token: agent.token, headers: { 'svc-workspace': seed.workspaceId } })).status,
      200,
    );

    // Without hours the inbox is never closed: switched on, it still answers nothing.
    assert.equal((await away({ enabled: true })).body.held, 'no_schedule');
    const c = await customerMail({ From: 'early@cust.example' });
    assert.deepEqual((await automaticIn(c.conversation_id)).away, []);
  });

  test('outside hours: one threaded automatic answer naming the next opening, instead of the greeting', async () => {
    const hours = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.apiKey, body: { weekly: WORKDAYS } });
    assert.equal(hours.status, 200, JSON.stringify(hours.body));
    assert.equal(hours.body.open_now, false);
    assert.equal((await away()).body.held, null);
    assert.equal((await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey, body: { enabled: true } })).status, 200);

    const mailed = sink.messages.length;
    const c = await customerMail({ From: 'Ada <ada@cust.example>', Subject: 'Weekend order', 'Message-ID': '<w1@cust.example>' });
    // Stored as a job in the transaction that stored the mail, sent by the job.
    const jobs = await s.app.db.selectFrom('jobs').select('payload').where('kind', '=', AWAY_JOB).execute();
    assert.equal(jobs.length, 1);
    const { away: replies, greetings } = await automaticIn(c.conversation_id);
    assert.equal(replies.length, 1);
    assert.equal(greetings.length, 0, 'the away reply answers instead of the greeting');
    assert.equal(replies[0].direction, 'out');
    assert.equal(replies[0].automatic, true);
    assert.equal(replies[0].details?.next_opening, '2026-11-09T06:00:00.000Z');
    assert.match(replies[0].body, /^Thank you for your message\. We are away right now and will answer from Monday.*9 November.*09:00.*GMT\+3\.$/);

    await sink.waitFor(mailed + 1);
    const mail = sink.messages[mailed];
    assert.deepEqual(mail.to, ['ada@cust.example']);
    assert.equal(mail.parsed.headers.get('auto-submitted'), 'auto-replied');
    assert.equal(mail.parsed.inReplyTo, '<w1@cust.example>');
    assert.equal(mail.parsed.subject, 'Re: Weekend order');
    const listed = await s.request('GET', '/v1/conversations?limit=200', { token: seed.apiKey });
    assert.equal(listed.body.data.find((x: { id: string }) => x.id === c.conversation_id).preview, 'Hello there.', 'the list keeps the customer’s words');
  });

  test('once per contact in 24 hours, also for a later mail of the same conversation', async () => {
    const first = await customerMail({ From: 'bob@cust.example', Subject: 'One', 'Message-ID': '<b1@cust.example>' });
    assert.equal((await automaticIn(first.conversation_id)).away.length, 1);
    clock.advance(2 * HOUR);
    const again = await customerMail({ From: 'bob@cust.example', Subject: 'Re: One', 'In-Reply-To': '<b1@cust.example>' });
    assert.equal(again.conversation_id, first.conversation_id);
    assert.equal((await automaticIn(first.conversation_id)).away.length, 1);
    // Sunday, 23 hours later: closed still, a day since the first answer.
    clock.advance(23 * HOUR);
    const later = await customerMail({ From: 'bob@cust.example', Subject: 'Re: One', 'In-Reply-To': '<b1@cust.example>' });
    assert.equal(later.conversation_id, first.conversation_id);
    assert.equal((await automaticIn(first.conversation_id)).away.length, 2);
  });

  test('never to automatic mail or noreply addresses; in the contact’s language', async () => {
    const automatic: Record<string, string>[] = [
      { From: 'vacation@cust.example', 'Auto-Submitted': 'auto-replied' },
      { From: 'noreply@cust.example' },
      { From: 'list@cust.example', 'List-Id': '<news.cust.example>', Precedence: 'list' },
    ];
    for (const headers of automatic) {
      const c = await customerMail(headers);
      assert.deepEqual((await automaticIn(c.conversation_id)).away, [], JSON.stringify(headers));
    }
    await s.request('PATCH', `/v1/inboxes/${seed.inboxId}`, { token: seed.apiKey, body: { locale: 'tr' } });
    const c = await customerMail({ From: 'ayse@cust.example' });
    const [reply] = (await automaticIn(c.conversation_id)).away;
    assert.equal(reply.details?.locale, 'tr');
    assert.match(reply.body, /^Mesajınız için teşekkür ederiz\. .*9 Kasım.*Pazartesi.*09:00.* itibarıyla yanıtlayacağız\.$/);
    await s.request('PATCH', `/v1/inboxes/${seed.inboxId}`, { token: seed.apiKey, body: { locale: 'en' } });
  });

  test('inside hours the greeting answers and the away reply does not; switched off, nothing', async () => {
    clock.set(new Date('2026-11-09T08:00:00Z')); // Monday 11:00 in Istanbul
    const open = await customerMail({ From: 'weekday@cust.example' });
    const during = await automaticIn(open.conversation_id);
    assert.equal(during.away.length, 0);
    assert.equal(during.greetings.length, 1);

    clock.set(new Date('2026-11-09T16:00:00Z')); // 19:00: closed again
    assert.equal((await away({ enabled: false })).status, 200);
    const off = await customerMail({ From: 'evening@cust.example' });
    const evening = await automaticIn(off.conversation_id);
    assert.equal(evening.away.length, 0);
    assert.equal(evening.greetings.length, 1, 'with the away reply off, the greeting answers at any hour');
  });
});
