// A reply that failed for good can be sent again from the panel: a fresh set of attempts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('retrying a failed reply', () => {
  let s: TestServer;
  let seed: Seed;
  let sink: SmtpSink;
  const clock = new ManualClock(new Date('2031-04-01T08:00:00Z'));

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET }, clock });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  test('failed after every attempt, sent again on request; only failed replies can be retried', async () => {
    const address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    const c = await deliverMail(s, address, { From: 'eve@retry.example', Subject: 'retry me' });
    sink.failWith(451);
    const reply = await s.request('POST', `/v1/conversations/${c.conversation_id}/messages`, { token: seed.ownerToken, body: { body: 'Answer' } });
    assert.equal(reply.status, 201);
    const path = `/v1/conversations/${c.conversation_id}/messages/${reply.body.id}`;
    for (let i = 0; i < 10; i++) {
      await s.app.jobs.drain();
      clock.advance(5 * 3600_000);
    }
    const failed = await s.request('GET', path, { token: seed.ownerToken });
    assert.equal(failed.body.status, 'failed');
    assert.ok(failed.body.error);

    sink.failWith(null);
    const retried = await s.request('POST', `${path}/retry`, { token: seed.ownerToken });
    assert.equal(retried.status, 200);
    assert.equal(retried.body.status, 'pending');
    assert.equal(retried.body.error, null);
    await s.app.jobs.drain();
    const [mail] = await sink.waitFor(1);
    assert.deepEqual(mail.to, ['eve@retry.example']);
    assert.equal((await s.request('GET', path, { token: seed.ownerToken })).body.status, 'sent');

    const again = await s.request('POST', `${path}/retry`, { token: seed.ownerToken });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'message_state');
    const note = await s.request('POST', `/v1/conversations/${c.conversation_id}/messages`, { token: seed.ownerToken, body: { kind: 'note', body: 'n' } });
    assert.equal((await s.request('POST', `/v1/conversations/${c.conversation_id}/messages/${note.body.id}/retry`, { token: seed.ownerToken })).status, 409);
    assert.equal((await s.request('POST', `/v1/conversations/${c.conversation_id}/messages/m_nope/retry`, { token: seed.ownerToken })).status, 404);
  });

  test('a reply waiting for its next attempt says when and why, and "retry now" tries at once', async () => {
    const address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    const c = await deliverMail(s, address, { From: 'finn@retry.example', Subject: 'waiting' });
    sink.failWith(451);
    const reply = await s.request('POST', `/v1/conversations/${c.conversation_id}/messages`, { token: seed.ownerToken, body: { body: 'Soon' } });
    const path = `/v1/conversations/${c.conversation_id}/messages/${reply.body.id}`;
    assert.equal(reply.body.retry_at, null);
    await s.app.jobs.drain();
    const waiting = await s.request('GET', path, { token: seed.ownerToken });
    assert.equal(waiting.body.status, 'pending');
    assert.match(waiting.body.error, /451/);
    assert.equal(waiting.body.retry_at, new Date(clock.now().getTime() + 60_000).toISOString(), 'the first retry is a minute later');
    // Open panels are told of the failed attempt at once (a message.updated event).
    const event = await s.app.db.selectFrom('events').select('data').where('type', '=', 'message.updated').orderBy('seq', 'desc').executeTakeFirstOrThrow();
    assert.equal(JSON.parse(event.data).message.retry_at, waiting.body.retry_at);

    sink.failWith(null);
    const now = await s.request('POST', `${path}/retry`, { token: seed.ownerToken });
    assert.equal(now.status, 200);
    assert.deepEqual([now.body.status, now.body.error, now.body.retry_at], ['pending', null, null], 'sending again now');
    const count = sink.messages.length;
    await s.app.jobs.drain(); // no clock moved: the job was brought forward
    const mails = await sink.waitFor(count + 1);
    assert.deepEqual(mails[count].to, ['finn@retry.example']);
    const sent = await s.request('GET', path, { token: seed.ownerToken });
    assert.deepEqual([sent.body.status, sent.body.error, sent.body.retry_at], ['sent', null, null]);
  });
});
