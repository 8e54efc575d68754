// Satisfaction ratings: a close by a person asks once by mail with signed one-click links; GET of a
// link records nothing (link scanners), POST records once; forged, expired and second answers are
// refused; never for closes by others than people, imported or spam conversations.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY, ManualClock } from '../../src/platform/clock.js';
import type { Seed } from '../helpers/fixtures.js';
import { rawMail, startMailingServer } from '../helpers/mail.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'ratings-secret';

describe('satisfaction ratings', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let sink: SmtpSink;
  const clock = new ManualClock(new Date('2026-11-03T10:00:00Z'));

  before(async () => {
    ({ s, seed, address, sink } = await startMailingServer({ ingressSecret: SECRET, clock }));
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  async function conversation(from: string) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({ To: address, From: from, Subject: 'Question' }),
      token: SECRET,
    });
    assert.equal(r.status, 201);
    return r.body.data[0].conversation_id as string;
  }
  const close = (id: string, token = seed.ownerToken) => s.request('PATCH', `/v1/conversations/${id}`, { token, body: { status: 'closed' } });
  const requestsOf = (id: string) => s.app.db.selectFrom('rating_requests').selectAll().where('conversation_id', '=', id).execute();

  /** The five links of the newest mailed request. */
  async function mailedLinks(count: number): Promise<string[]> {
    await s.app.jobs.drain();
    const mail = (await sink.waitFor(count))[count - 1];
    const links = [...(mail.parsed.text ?? '').matchAll(/https?:\/\/\S+\/v1\/ratings\/\S+/g)].map((m) => m[0]);
    assert.equal(links.length, 5, mail.parsed.text);
    assert.equal(mail.parsed.headers.get('auto-submitted'), 'auto-generated');
    // HTML with five buttons naming the answers, not bare links (issue 43 item 13); the same five links.
    const html = String(mail.parsed.html);
    const buttons = [...html.matchAll(/<a href="([^"]+)" style="display:block;[^"]*background:#1d4ed8[^"]*">([^<]+)<\/a>/g)];
    assert.deepEqual(
      buttons.map((b) => b[2]!.replace(/ .*/, '')),
      ['1', '2', '3', '4', '5'],
      html,
    );
    assert.deepEqual(
      buttons.map((b) => b[1]!.replace(/&amp;/g, '&')),
      links,
    );
    return links.map((l) => new URL(l).pathname + new URL(l).search);
  }

  const form = (score: string, comment = '') => ({
    raw: new URLSearchParams({ score, comment }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

  test('off by default: a close asks nothing', async () => {
    const id = await conversation('quiet@cust.example');
    assert.equal((await close(id)).status, 200);
    assert.deepEqual(await requestsOf(id), []);
    const on = await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/ratings`, { token: seed.apiKey, body: { enabled: true } });
    assert.equal(on.status, 200);
    assert.equal(on.body.enabled, true);
  });

  test('a close by a member asks once by mail; GET records nothing, POST records once', async () => {
    const id = await conversation('Ada <ada@cust.example>');
    const before = sink.messages.length;
    await close(id);
    const links = await mailedLinks(before + 1);
    assert.deepEqual(sink.messages[before].to, ['ada@cust.example']);
    // Link scanners fetch every link: nothing is recorded.
    for (const link of links) {
      const page = await s.request('GET', link);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type')!, /text\/html/);
      assert.match(page.headers.get('content-security-policy')!, /default-src 'none'/);
    }
    const page4 = await s.request('GET', links[3]);
    assert.match(String(page4.body), /value="4" checked/);
    let conv = await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey });
    assert.equal(conv.body.rating, null);

    // Reopened and closed again: still asked only once.
    await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.ownerToken, body: { status: 'open' } });
    await close(id);
    assert.equal((await requestsOf(id)).length, 1);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before + 1);

    const bad = await s.request('POST', links[3].split('?')[0], form('9'));
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_request');
    const badInBrowser = await s.request('POST', links[3].split('?')[0], {
      ...form('9'),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    });
    assert.equal(badInBrowser.status, 400);
    assert.match(String(badInBrowser.body), /role="alert"/);
    assert.equal((await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.rating, null);

    const posted = await s.request('POST', links[3].split('?')[0], form('4', 'Quick and kind.'));
    assert.equal(posted.status, 200, String(posted.body));
    conv = await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey });
    assert.equal(conv.body.rating.score, 4);
    assert.equal(conv.body.rating.comment, 'Quick and kind.');
    const event = await s.app.db.selectFrom('events').selectAll().where('type', '=', 'conversation.rated').executeTakeFirstOrThrow();
    assert.equal(event.webhook, 0);

    // Single use: a second answer (another score) is refused and changes nothing.
    const again = await s.request('POST', links[0].split('?')[0], form('1'));
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'rating_already_recorded');
    assert.equal((await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.rating.score, 4);
  });

  test('forged, unknown and expired links are refused', async () => {
    const id = await conversation('bob@cust.example');
    const before = sink.messages.length;
    await close(id);
    const links = await mailedLinks(before + 1);
    const path = links[4].split('?')[0];
    const forged = path.slice(0, -3) + (path.endsWith('AAA') ? 'BBB' : 'AAA');
    assert.equal((await s.request('GET', forged)).status, 404);
    assert.equal((await s.request('POST', forged, form('5'))).status, 404);
    assert.equal((await s.request('POST', '/v1/ratings/not-a-token', form('5'))).status, 404);
    clock.advance(31 * DAY);
    const expired = await s.request('POST', path, form('5'));
    assert.equal(expired.status, 410);
    assert.equal(expired.body.error.code, 'rating_expired');
    assert.equal((await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.rating, null);
  });

  test('never for spam or for mail from noreply addresses', async () => {
    const spam = await conversation('spammer@cust.example');
    await s.request('PATCH', `/v1/conversations/${spam}`, { token: seed.ownerToken, body: { spam: true } });
    await close(spam);
    assert.deepEqual(await requestsOf(spam), []);
    const robot = await conversation('no-reply@cust.example');
    await close(robot);
    assert.deepEqual(await requestsOf(robot), []);
  });

  test('the rating link secret is in no API answer, event or log line', async () => {
    const rows = await s.app.db.selectFrom('rating_requests').select('id').execute();
    const events = (await s.app.db.selectFrom('events').select('data').execute()).map((e) => e.data).join('');
    const text = events + s.rawLogs.join('');
    for (const mail of sink.messages) {
      for (const m of (mail.parsed.text ?? '').matchAll(/\/v1\/ratings\/(rr_[0-9a-z]+\.[A-Za-z0-9_-]+)/g)) assert.ok(!text.includes(m[1]));
    }
    assert.ok(rows.length >= 2);
  });
});
