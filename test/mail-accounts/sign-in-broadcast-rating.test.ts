// Broadcasts and rating requests through a channel that sends with a Google sign-in (issue 38),
// when the grant is revoked: the broadcast pauses at once with Google's words (its recipients stay
// pending) and the managers are told about the channel; the rating request fails at once and tells
// nobody again (one revocation, told once). A new sign-in sends the rating request again; the
// broadcast waits for a member to resume it, and then sends through the new sign-in.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { addresses, createBroadcast, getBroadcast, schedule } from '../helpers/broadcasts.js';
import type { Seed } from '../helpers/fixtures.js';
import { rawMail } from '../helpers/mail.js';
import type { OAuthFake } from '../helpers/oauth-fake.js';
import type { TestServer } from '../helpers/server.js';
import { type SignInScene, signIn, startSignInScene } from '../helpers/sign-in.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

const CLIENTS = { google: { id: 'bcast-google.apps.test', secret: 'bcast-google-secret' }, microsoft: { id: 'bcast-ms-0001', secret: 'bcast-ms-secret' } };
const SECRET = 'sign-in-broadcast-ingress';
const GMAIL = 'news@gmail-bcast.test';

describe('broadcasts and rating requests through a sign-in channel whose grant is revoked', () => {
  let scene: SignInScene;
  let fake: OAuthFake;
  let sink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
  let channelId: string;
  const clock = new ManualClock(new Date());

  before(async () => {
    scene = await startSignInScene({ clients: CLIENTS, providers: ['google'], smtpSink: true, clock, env: { SVC_INGRESS_SECRET: SECRET }, stopJobs: true });
    ({ fake, sink, s, seed } = scene);
  });
  after(() => scene?.stop());

  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.apiKey, body });
  const told = () => s.app.db.selectFrom('notifications').selectAll().where('trigger', '=', 'sign_in_required').execute();

  test('revoked: the broadcast pauses, the rating request fails, managers told once; a new sign-in sends the rating request', async () => {
    const created = await api('POST', '/v1/channels', { kind: 'email', inbox_id: seed.inboxId, name: 'News', address: GMAIL, smtp_auth: 'google' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    channelId = created.body.id;
    await signIn(s, created.body.sign_in.url);
    assert.equal((await api('PATCH', `/v1/inboxes/${seed.inboxId}/ratings`, { enabled: true })).status, 200);
    const mail = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(GMAIL)}`, {
      raw: rawMail({ To: GMAIL, From: 'Customer <c@cust.example>', Subject: 'A question', 'Message-ID': '<q1@cust.example>' }),
      token: SECRET,
    });
    assert.equal(mail.status, 201, JSON.stringify(mail.body));
    const conversation = mail.body.data[0].conversation_id as string;

    fake.revokeUser(GMAIL);
    fake.expireAccessTokens();
    clock.advance(60 * MINUTE);

    // The broadcast: paused at once (no retries in 1, 5, 15 minutes), nobody marked failed.
    const draft = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(3), { channel_id: channelId });
    assert.equal((await schedule(s, seed.apiKey, draft.id)).status, 200);
    await s.app.jobs.drain();
    const paused = await getBroadcast(s, seed.apiKey, draft.id);
    assert.equal(paused.status, 'paused');
    assert.equal(paused.pause_reason, 'sender_error');
    assert.match(paused.pause_detail!, /Google no longer accepts the sign-in of this channel \(invalid_grant: Token has been expired or revoked\.\)/);
    assert.equal(paused.counts.failed ?? 0, 0);
    assert.equal(sink.messages.length, 0);
    const first = await told();
    assert.equal(first.length, 1, 'the one manager, told about the channel');
    assert.equal(first[0].person_id, seed.ownerId);
    assert.equal(first[0].conversation_id, null);
    assert.equal(first[0].channel_id, channelId);
    assert.equal(first[0].title, 'Sign in again: News (Google) cannot send');

    // The rating request: failed at once with Google's words; the same revocation tells nobody again.
    assert.equal((await api('PATCH', `/v1/conversations/${conversation}`, { status: 'closed' })).status, 200);
    await s.app.jobs.drain();
    const request = await s.app.db.selectFrom('rating_requests').selectAll().where('conversation_id', '=', conversation).executeTakeFirstOrThrow();
    assert.equal(request.status, 'failed');
    assert.match(request.error!, /no longer accepts the sign-in of this channel/);
    assert.equal((await told()).length, 1);

    // A new sign-in: the rating request goes; the broadcast stays paused until a member resumes it.
    const again = await api('PATCH', `/v1/channels/${channelId}`, { smtp_auth: 'google' });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    await signIn(s, again.body.sign_in.url);
    await s.app.jobs.drain();
    const rated = await s.app.db.selectFrom('rating_requests').select(['status', 'error']).where('id', '=', request.id).executeTakeFirstOrThrow();
    assert.deepEqual(rated, { status: 'sent', error: null });
    const ratingMail = await sink.waitFor(1);
    assert.equal(ratingMail[0].from, GMAIL);
    assert.equal(sink.auths.at(-1)!.user, GMAIL);
    assert.equal((await getBroadcast(s, seed.apiKey, draft.id)).status, 'paused');

    assert.equal((await api('POST', `/v1/broadcasts/${draft.id}/resume`)).status, 200);
    await s.app.jobs.drain();
    await sink.waitFor(4);
    const sent = await getBroadcast(s, seed.apiKey, draft.id);
    assert.equal(sent.status, 'sent');
    assert.equal(sent.counts.sent, 3);
  });
});
