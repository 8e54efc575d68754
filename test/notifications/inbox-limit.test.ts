// A member's `notification` events name a conversation: like every conversation event, they show
// (GET /v1/events, the realtime socket's replay) only while the member sees its inbox now, not when
// they were told; and a notification mail or push waiting when the member's inbox limit narrows
// leaves out what they no longer see.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { up as giveOldNotificationsTheirInbox } from '../../migrations/0028_notification_event_inboxes.js';
import { recordEvent } from '../../src/events/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { notificationsBackground } from '../../src/notifications/background.js';
import { NOTIFY_EVENT_JOB } from '../../src/notifications/reaction.js';
import { PUSH_JOB } from '../../src/notifications/service.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { JobRunner } from '../../src/platform/jobs.js';
import { addPerson, type Seed } from '../helpers/fixtures.js';
import { deliverMail } from '../helpers/mail.js';
import { type Person, startNotifyingServer, subscribeAt } from '../helpers/notifications.js';
import type { PushService } from '../helpers/push-service.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

describe('a member’s notifications follow their current inbox limit', () => {
  let s: TestServer;
  let clock: ManualClock;
  let sink: SmtpSink;
  let push: PushService;
  let seed: Seed;
  let agent: Person;
  let memberId: string;
  let otherInbox: string;
  let address: string;
  let stop: () => Promise<void>;

  before(async () => {
    ({ s, clock, sink, push, seed, address, stop } = await startNotifyingServer());
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    otherInbox = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Other' })).id;
    const members = await s.request('GET', '/v1/members', { token: seed.ownerToken });
    memberId = members.body.data.find((m: { person_id: string }) => m.person_id === agent.personId).id;
  });
  after(() => stop());

  async function limitAgentTo(inboxIds: string[] | null) {
    const r = await s.request('PATCH', `/v1/members/${memberId}`, { token: seed.ownerToken, body: { inbox_ids: inboxIds } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }

  /** The agent's notification events about a conversation, from GET /v1/events. */
  async function listed(conversationId: string): Promise<string[]> {
    const r = await s.request('GET', '/v1/events?limit=200', { token: agent.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data.filter((e: any) => e.type === 'notification' && e.data.notification.conversation_id === conversationId).map((e: any) => e.id);
  }

  /** The same from the realtime socket: its replay from the start, up to the `live` frame that ends it. */
  async function replayed(conversationId: string): Promise<string[]> {
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/realtime?after=0`, { headers: { authorization: `Bearer ${agent.token}` } });
    const frames: any[] = [];
    try {
      await new Promise<void>((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error(`no live frame within 20 s; frames: ${JSON.stringify(frames.slice(-3))}`)), 20_000);
        ws.on('message', (data) => {
          const frame = JSON.parse(String(data));
          frames.push(frame);
          if (frame.type === 'live') {
            clearTimeout(deadline);
            resolve();
          }
        });
        ws.once('unexpected-response', (_req, res) => reject(new Error(`refused with ${res.statusCode}`)));
        ws.once('error', reject);
      });
    } finally {
      ws.close();
    }
    return frames
      .filter((f) => f.type === 'event' && f.event.type === 'notification' && f.event.data.notification.conversation_id === conversationId)
      .map((f) => f.event.id);
  }

  test('told while the agent saw the inbox; hidden once the limit leaves it out; shown again when widened', async () => {
    await limitAgentTo([seed.inboxId, otherInbox]);
    const { conversation_id } = await deliverMail(s, address, { Subject: 'Limited view' });
    await s.app.jobs.drain();
    const told = await s.app.db
      .selectFrom('notifications')
      .select('id')
      .where('person_id', '=', agent.personId)
      .where('conversation_id', '=', conversation_id)
      .execute();
    assert.equal(told.length, 1, 'the agent saw the inbox and was told');
    const shown = await listed(conversation_id);
    assert.equal(shown.length, 1);
    assert.deepEqual(await replayed(conversation_id), shown);

    await limitAgentTo([otherInbox]);
    assert.deepEqual(await listed(conversation_id), [], 'GET /v1/events: the inbox is no longer theirs');
    assert.deepEqual(await replayed(conversation_id), [], 'the realtime replay neither');
    const conversation = await s.request('GET', `/v1/conversations/${conversation_id}`, { token: agent.token });
    assert.equal(conversation.status, 404, 'as the conversation itself');

    await limitAgentTo([seed.inboxId]);
    assert.deepEqual(await listed(conversation_id), shown, 'widened again: shown again');
    assert.deepEqual(await replayed(conversation_id), shown);
    await limitAgentTo(null);
    assert.deepEqual(await listed(conversation_id), shown, 'no limit: every inbox');
  });

  test('notification events recorded before they carried their inbox get it from their data (migration 0028)', async () => {
    await limitAgentTo([otherInbox]);
    const conversationId = 'cv_recorded_before';
    // As the notification job recorded them before: no inbox on the event, only in its data.
    const old = await recordEvent(s.app, {
      workspaceId: seed.workspaceId,
      personId: agent.personId,
      type: 'notification',
      occurredAt: s.app.clock.now(),
      data: { notification: { id: 'ntf_before', conversation_id: conversationId, inbox_id: seed.inboxId, title: 't', body: 'b' } },
      webhook: false,
    });
    await giveOldNotificationsTheirInbox(s.app.db);
    const row = await s.app.db.selectFrom('events').select(['inbox_id', 'related_inbox_ids']).where('id', '=', old.id).executeTakeFirstOrThrow();
    assert.equal(row.inbox_id, seed.inboxId);
    assert.deepEqual(JSON.parse(row.related_inbox_ids ?? 'null'), [seed.inboxId]);
    assert.deepEqual(await listed(conversationId), [], 'limited to another inbox');
    await limitAgentTo([seed.inboxId]);
    assert.deepEqual(await listed(conversationId), [old.id]);
  });

  test('a notification e-mail waiting when the limit narrows leaves out what the member no longer sees', async () => {
    await limitAgentTo([seed.inboxId, otherInbox]);
    const on = await s.request('PATCH', '/v1/me/notification-preferences', { token: agent.token, body: { new_conversation: { email: true } } });
    assert.equal(on.status, 200, JSON.stringify(on.body));
    const mailsToAgent = () => sink.messages.filter((m) => m.to.includes(agent.email));
    // No panel open for 5 minutes (the replays above were realtime connections): told by e-mail.
    clock.advance(6 * MINUTE);
    await deliverMail(s, address, { Subject: 'Mailed at once' });
    await s.app.jobs.drain();
    await sink.waitFor(1);
    assert.equal(mailsToAgent().length, 1);
    assert.match(mailsToAgent()[0].parsed.text ?? '', /Mailed at once/);

    clock.advance(MINUTE);
    await deliverMail(s, address, { Subject: 'Waiting while narrowed' });
    await s.app.jobs.drain();
    const waiting = () => s.app.db.selectFrom('notification_mail_lines').select('notification_id').where('person_id', '=', agent.personId).execute();
    assert.equal((await waiting()).length, 1, 'the line waits for the next mail');
    await limitAgentTo([otherInbox]);
    clock.advance(10 * MINUTE);
    await s.app.jobs.drain();
    assert.equal(mailsToAgent().length, 1, 'nothing about an inbox the agent no longer sees is mailed');
    assert.deepEqual(await waiting(), [], 'the line is dropped');
    const job = await s.app.db.selectFrom('jobs').select('id').where('unique_key', '=', `notifications.mail:${agent.personId}`).execute();
    assert.deepEqual(job, [], 'nothing mailed, nothing waiting: the job ends');
  });

  test('a push queued while the agent saw the inbox goes out only if they still see the conversation when it is sent', async () => {
    await limitAgentTo([seed.inboxId, otherInbox]);
    const { path } = await subscribeAt(s, push, agent, 'limited-agent');
    const pushedAbout = (conversationId: string) => push.received.filter((r) => r.path === path && r.payload.conversation_id === conversationId);
    const pushJobs = () => s.app.db.selectFrom('jobs').select('id').where('kind', '=', PUSH_JOB).execute();
    // Tells the member (stores the push job) without sending: a runner that knows only that job.
    const tell = new JobRunner({ db: s.app.db, clock, log: s.app.log });
    tell.register(notificationsBackground.jobs!(s.app).find((k) => k.kind === NOTIFY_EVENT_JOB)!);

    const narrowed = await deliverMail(s, address, { Subject: 'Queued, then narrowed' });
    await tell.drain();
    assert.equal((await pushJobs()).length, 1, 'the push is queued');
    await limitAgentTo([otherInbox]);
    await s.app.jobs.drain();
    assert.deepEqual(pushedAbout(narrowed.conversation_id), [], 'the limit no longer includes the inbox: not sent');
    assert.deepEqual(await pushJobs(), [], 'and not kept for later');

    await limitAgentTo([seed.inboxId]);
    const widened = await deliverMail(s, address, { Subject: 'After widening' });
    await s.app.jobs.drain();
    assert.deepEqual(push.problems, []);
    assert.equal(pushedAbout(widened.conversation_id).length, 1, 'widened again: a later push goes out');
    assert.deepEqual(pushedAbout(narrowed.conversation_id), [], 'nothing dropped is sent late');

    const moved = await deliverMail(s, address, { Subject: 'Queued, then moved' });
    await tell.drain();
    assert.equal((await pushJobs()).length, 1);
    const move = await s.request('PATCH', `/v1/conversations/${moved.conversation_id}`, { token: seed.ownerToken, body: { inbox_id: otherInbox } });
    assert.equal(move.status, 200, JSON.stringify(move.body));
    await s.app.jobs.drain();
    assert.deepEqual(pushedAbout(moved.conversation_id), [], 'moved to an inbox the agent does not see: not sent');

    const removed = await deliverMail(s, address, { Subject: 'Queued, then left' });
    await tell.drain();
    assert.equal((await pushJobs()).length, 1);
    const left = await s.request('DELETE', `/v1/members/${memberId}`, { token: seed.ownerToken });
    assert.ok(left.status === 200 || left.status === 204, JSON.stringify(left.body));
    await s.app.jobs.drain();
    assert.deepEqual(pushedAbout(removed.conversation_id), [], 'no longer a member: not sent');
  });
});
