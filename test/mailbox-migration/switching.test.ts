// Switching delivery, finishing and removing history against a real Dovecot, the real SMTP
// ingress and a ManualClock, for one migration from syncing to removed: the old mailbox read while
// syncing (history vs new mail, mail that arrives both ways stored once), the routing options, a
// provider's forwarding confirmation, the test message (rate limited) and its arrival by
// forwarding, the quiet period and completion by itself, and remove-history (wrong and right count,
// a conversation someone wrote in stays, resumed after a restart). The old mailbox is never
// changed. Finish with force and the sync limit: switching-limits.test.ts; the scene is
// switching-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { memberAccess } from '../../src/auth/access.js';
import { readEvents, viewerFor } from '../../src/events/service.js';
import { HOUR, MINUTE } from '../../src/platform/clock.js';
import { dovecotMissing } from '../helpers/dovecot.js';
import { ingressPort, sendToIngress } from '../helpers/mail.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { expectState, SUPPORT } from '../helpers/migration.js';
import { sceneOf } from '../helpers/scene.js';
import { startTestServer } from '../helpers/server.js';
import { FORWARDING_DOMAIN, startSwitchingScene, stopSwitchingScene } from './switching-scene.js';

describe('switching delivery, finishing and removing imported history', { skip: dovecotMissing }, () => {
  const scene = sceneOf(() => startSwitchingScene([SUPPORT]), stopSwitchingScene);
  let id: string;
  let forwarding: string;

  before(async () => {
    const { d, now, toSyncing } = scene();
    // History: T1 (a customer and the team's answer), T2 and T3 (a customer each).
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({ from: 'Tina <tina@customer.test>', to: SUPPORT, subject: 'T1', messageId: 't1@customer.test', date: daysAgo(now, 3) }),
        flags: 'S',
        receivedAt: daysAgo(now, 3),
      },
      {
        raw: await buildMail({ from: 'Tom <tom@customer.test>', to: SUPPORT, subject: 'T2', messageId: 't2@customer.test', date: daysAgo(now, 2) }),
        flags: 'S',
        receivedAt: daysAgo(now, 2),
      },
      {
        raw: await buildMail({ from: 'Tess <tess@customer.test>', to: SUPPORT, subject: 'T3', messageId: 't3@customer.test', date: daysAgo(now, 1) }),
        flags: 'S',
        receivedAt: daysAgo(now, 1),
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      {
        raw: await buildMail({
          from: `Acme <${SUPPORT}>`,
          to: 'tina@customer.test',
          subject: 'Re: T1',
          messageId: 't1-answer@acme.test',
          inReplyTo: 't1@customer.test',
          references: ['t1@customer.test'],
          date: daysAgo(now, 2),
        }),
        flags: 'S',
        receivedAt: daysAgo(now, 2),
      },
    ]);
    ({ id, forwarding } = await toSyncing(SUPPORT));
  });

  test('the routing options: forwarding, server routing and MX, with the channel’s forwarding address', async () => {
    const { api } = scene();
    const m = (await api('GET', `/v1/migrations/${id}`)).body;
    assert.ok(forwarding.endsWith(`@${FORWARDING_DOMAIN}`));
    assert.equal(m.routing.forwarding_address, forwarding);
    assert.deepEqual(
      m.routing.ways.map((w: { way: string }) => w.way),
      ['forwarding', 'server_routing', 'mx'],
    );
    assert.deepEqual(
      m.routing.ways.map((w: { old_mailbox_keeps_a_copy: boolean }) => w.old_mailbox_keeps_a_copy),
      [true, true, false],
    );
    assert.equal(m.routing.ways[2].domain, 'acme.test');
    assert.equal(m.sync.history_until, m.copy_ended_at);
    assert.equal(m.sync.poll_seconds, 120);
    assert.deepEqual(m.allowed_actions, ['preview', 'cancel', 'retry', 'probe', 'finish', 'keep_reading']);
  });

  test('syncing reads new UIDs: history copied quietly, new mail delivered as usual, mail that arrives both ways stored once', async () => {
    const { d, s, seed, at, api, poll, conversationOf, copies } = scene();
    const eventsBefore = Number(
      (
        await s.app.db
          .selectFrom('events')
          .select((eb) => eb.fn.max('seq').as('m'))
          .executeTakeFirst()
      )?.m ?? 0,
    );
    // Received before the copy ended (history), the team's answer to it sent afterwards (still history).
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({ from: 'Lars <lars@customer.test>', to: SUPPORT, subject: 'Late history', messageId: 'late@customer.test', date: at(-HOUR) }),
        flags: 'S',
        receivedAt: at(-HOUR),
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      {
        raw: await buildMail({
          from: `Acme <${SUPPORT}>`,
          to: 'lars@customer.test',
          subject: 'Re: Late history',
          messageId: 'late-answer@acme.test',
          inReplyTo: 'late@customer.test',
          references: ['late@customer.test'],
          date: at(MINUTE),
        }),
        flags: 'S',
        receivedAt: at(MINUTE),
      },
      // The team's own new thread is skipped like in the plan (threads of only the team's mail).
      {
        raw: await buildMail({
          from: `Acme <${SUPPORT}>`,
          to: 'partner@vendor.test',
          subject: 'Team only',
          messageId: 'team-only@acme.test',
          date: at(MINUTE),
        }),
        flags: 'S',
        receivedAt: at(MINUTE),
      },
    ]);
    // New mail: only in the old mailbox; a customer's reply to T1; and one that came by forwarding first.
    const both = await buildMail({ from: 'Bea <bea@customer.test>', to: SUPPORT, subject: 'Both ways', messageId: 'both@customer.test', date: at(30_000) });
    const stored = await sendToIngress(ingressPort(s), { envelope: { from: 'bea@customer.test', to: [forwarding] }, raw: both });
    const nina = await buildMail({ from: 'Nina <nina@customer.test>', to: SUPPORT, subject: 'Brand new', messageId: 'new@customer.test', date: at(20_000) });
    assert.match(stored.response, /^250/);
    d.deliver(SUPPORT, 'INBOX', [
      { raw: nina, receivedAt: at(20_000), isNew: true },
      {
        raw: await buildMail({
          from: 'Tina <tina@customer.test>',
          to: SUPPORT,
          subject: 'Re: T1',
          messageId: 't1-again@customer.test',
          inReplyTo: 't1-answer@acme.test',
          references: ['t1@customer.test', 't1-answer@acme.test'],
          date: at(25_000),
        }),
        receivedAt: at(25_000),
      },
      { raw: both, receivedAt: at(40_000) },
    ]);
    const disk = d.snapshot(SUPPORT);
    await poll();
    assert.deepEqual(d.snapshot(SUPPORT), disk, 'the old mailbox is unchanged');
    const lines = d.rawlogCommands(SUPPORT);
    assert.ok(!lines.some((l) => /STORE|SELECT |EXPUNGE|APPEND|BODY\[/.test(l)), 'only read-only commands');

    const late = (await conversationOf('late@customer.test'))!;
    assert.equal(late.imported, 1, 'history is imported');
    const lateMessages = await s.app.db
      .selectFrom('messages')
      .selectAll()
      .where('conversation_id', '=', late.id)
      .where('kind', '=', 'message')
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      lateMessages.map((x) => `${x.direction}:${x.imported_at !== null}`),
      ['in:true', 'out:true'],
      'the team’s answer sent after the copy is history too',
    );
    const fresh = (await conversationOf('new@customer.test'))!;
    assert.equal(fresh.imported, 0, 'new mail is not imported');
    assert.equal(fresh.status, 'open');
    const t1 = (await conversationOf('t1@customer.test'))!;
    assert.equal((await conversationOf('t1-again@customer.test'))!.id, t1.id, 'a reply joins its imported conversation');
    assert.equal(await copies('both@customer.test'), 1, 'mail that arrived both ways is stored once');
    assert.equal(await copies('team-only@acme.test'), 0);
    const teamOnly = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select('skip_reason')
      .where('migration_id', '=', id)
      .where('rfc_id', '=', 'team-only@acme.test')
      .executeTakeFirstOrThrow();
    assert.equal(teamOnly.skip_reason, 'team_only');

    const events = await s.app.db.selectFrom('events').selectAll().where('seq', '>', eventsBefore).where('workspace_id', '=', seed.workspaceId).execute();
    const created = events.filter((e) => e.type === 'conversation.created').map((e) => JSON.parse(e.data).conversation?.id ?? JSON.parse(e.data).id);
    assert.ok(created.includes(fresh.id), 'new mail has its events (webhooks as usual)');
    assert.ok(events.filter((e) => e.type === 'conversation.created').every((e) => e.webhook === 1));
    assert.ok(!events.some((e) => e.data.includes(late.id)), 'no event about the imported history');

    const m = (await api('GET', `/v1/migrations/${id}`)).body;
    assert.equal(m.sync.new_mail_from_old_mailbox, 2);
    assert.equal(m.sync.arrived_both_ways, 1);
    assert.ok(m.sync.last_only_in_old_mailbox_at);
    assert.equal(m.state, 'syncing');

    // Nothing new: the next read finds nothing and repeats nothing.
    await poll();
    assert.equal(await copies('new@customer.test'), 1);
    assert.equal(await copies('late@customer.test'), 1);
    // A second copy of the same mail by the new route after the old mailbox had it: stored once.
    const again = await sendToIngress(ingressPort(s), { envelope: { from: 'nina@customer.test', to: [forwarding] }, raw: nina });
    assert.match(again.response, /^250/);
    assert.equal(await copies('new@customer.test'), 1);
  });

  test('a provider’s forwarding confirmation reaches owners and admins with its code and link', async () => {
    const { s, seed, clock } = scene();
    const mail = await buildMail({
      from: 'Mail Team <forwarding-noreply@google.com>',
      to: forwarding,
      subject: `(#482913377) Forwarding Confirmation - Receive Mail from ${SUPPORT}`,
      date: clock.now(),
      text: `${SUPPORT} has requested to automatically forward mail to your email address ${forwarding}.\nConfirmation code: 482913377\n\nTo allow ${SUPPORT} to automatically forward mail to your address, please click the link below to confirm the request:\n\nhttps://mail-settings.example.com/mail/vf-%5BANGjdJ8%5D-confirm\n`,
    });
    const before = Number(
      (
        await s.app.db
          .selectFrom('events')
          .select((eb) => eb.fn.max('seq').as('m'))
          .executeTakeFirst()
      )?.m ?? 0,
    );
    const r = await sendToIngress(ingressPort(s), { envelope: { from: 'forwarding-noreply@google.com', to: [forwarding] }, raw: mail });
    assert.match(r.response, /^250/);
    const events = await s.app.db.selectFrom('events').selectAll().where('seq', '>', before).execute();
    const confirmation = events.find((e) => e.type === 'migration.forwarding_confirmation');
    assert.ok(confirmation, 'the event was recorded');
    assert.equal(confirmation.audience, 'admins');
    assert.equal(confirmation.webhook, 0);
    const data = JSON.parse(confirmation.data);
    assert.equal(data.migration_id, id);
    assert.equal(data.code, '482913377');
    assert.equal(data.link, 'https://mail-settings.example.com/mail/vf-%5BANGjdJ8%5D-confirm');
    const owner = await readEvents(s.app, viewerFor(memberAccess(seed.workspaceId, seed.ownerId, 'owner', 'ses')), before, 100);
    const agent = await readEvents(s.app, viewerFor(memberAccess(seed.workspaceId, 'per_agent', 'agent', 'ses')), before, 100);
    assert.ok(!owner.expired && owner.events.some((e) => e.type === 'migration.forwarding_confirmation'), 'owners and admins see it');
    assert.ok(!agent.expired && !agent.events.some((e) => e.type === 'migration.forwarding_confirmation'), 'agents do not');
    const contact = await s.app.db.selectFrom('contact_emails').select('contact_id').where('email', '=', 'forwarding-noreply@google.com').executeTakeFirst();
    assert.equal(contact, undefined, 'it is no conversation');

    // Another provider's confirmation: surfaced too, and kept as a conversation (a sender that may
    // send other mail is never dropped on a guess).
    const other = await buildMail({
      from: 'Mail Service <no-reply@mailhost.test>',
      to: forwarding,
      subject: 'Please confirm forwarding to your address',
      date: clock.now(),
      text: 'Someone asked to forward mail here. Verification code: ZX-4411\nhttps://mailhost.test/settings/forwarding/verify?t=abc\n',
    });
    const seq = Number(
      (
        await s.app.db
          .selectFrom('events')
          .select((eb) => eb.fn.max('seq').as('m'))
          .executeTakeFirst()
      )?.m ?? 0,
    );
    assert.match((await sendToIngress(ingressPort(s), { envelope: { from: 'no-reply@mailhost.test', to: [forwarding] }, raw: other })).response, /^250/);
    const second = (await s.app.db.selectFrom('events').selectAll().where('seq', '>', seq).execute()).find(
      (e) => e.type === 'migration.forwarding_confirmation',
    );
    assert.deepEqual(
      { code: JSON.parse(second!.data).code, link: JSON.parse(second!.data).link },
      { code: 'ZX-4411', link: 'https://mailhost.test/settings/forwarding/verify?t=abc' },
    );
    assert.ok(
      await s.app.db.selectFrom('contact_emails').select('contact_id').where('email', '=', 'no-reply@mailhost.test').executeTakeFirst(),
      'stored as usual',
    );
  });

  test('finish is refused before a test message arrived; the test message is rate limited; its arrival by forwarding is recorded', async () => {
    const { d, s, sink, seed, clock, api, poll } = scene();
    const refused = await api('POST', `/v1/migrations/${id}/finish`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'migration_state');
    assert.equal(refused.body.error.state, 'syncing');
    assert.ok(refused.body.error.allowed_actions.includes('finish'));

    const sent = await api('POST', `/v1/migrations/${id}/probe`);
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.ok(sent.body.test_message.sent_at);
    assert.equal(sent.body.test_message.arrived_at, null);
    const [probe] = await sink.waitFor(1);
    assert.deepEqual(probe.to, [SUPPORT]);
    assert.match(probe.parsed.messageId ?? '', new RegExp(`^<svc-migration-probe\\.${id}\\.`));
    assert.equal((await api('POST', `/v1/migrations/${id}/probe`)).status, 202);
    assert.equal((await api('POST', `/v1/migrations/${id}/probe`)).status, 202);
    const limited = await api('POST', `/v1/migrations/${id}/probe`);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    await sink.waitFor(3);
    assert.equal(sink.messages.length, 3, 'the refused one was not sent');

    // The provider forwards it (and keeps a copy in the old mailbox).
    const r = await sendToIngress(ingressPort(s), { envelope: { from: 'svc@svc.test', to: [forwarding] }, raw: probe.raw });
    assert.match(r.response, /^250/);
    d.deliver(SUPPORT, 'INBOX', [{ raw: probe.raw, receivedAt: clock.now() }]);
    await poll();
    const m = (await api('GET', `/v1/migrations/${id}`)).body;
    assert.ok(m.test_message.arrived_at);
    assert.equal(m.test_message.route, 'forwarding');
    const probeItems = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select(['status', 'skip_reason'])
      .where('migration_id', '=', id)
      .where('rfc_id', 'like', 'svc-migration-probe.%')
      .execute();
    assert.deepEqual(probeItems, [{ status: 'skipped', skip_reason: 'test_message' }]);
    const subjects = (await s.app.db.selectFrom('conversations').select('subject').where('workspace_id', '=', seed.workspaceId).execute()).map(
      (c) => c.subject,
    );
    assert.ok(!subjects.some((x) => x?.startsWith('Test message')), 'the test message is no conversation');
  });

  test('the quiet period: mail only in the old mailbox restarts it; 24 quiet hours complete the migration and delete the password', async () => {
    const { d, s, seed, clock, api, drain, poll, copies } = scene();
    clock.advance(HOUR);
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({ from: 'Olga <olga@customer.test>', to: SUPPORT, subject: 'Only old', messageId: 'old-only@customer.test', date: clock.now() }),
        receivedAt: clock.now(),
      },
    ]);
    await poll();
    const reset = (await api('GET', `/v1/migrations/${id}`)).body;
    assert.equal(await copies('old-only@customer.test'), 1);
    const completesAt = new Date(reset.sync.completes_at).getTime();
    assert.equal(completesAt, new Date(reset.sync.last_only_in_old_mailbox_at).getTime() + 24 * HOUR);
    clock.advance(23 * HOUR);
    await drain();
    await expectState(s, seed.apiKey, id, 'syncing');
    clock.set(new Date(completesAt + MINUTE));
    await drain();
    const done = await expectState(s, seed.apiKey, id, 'completed');
    assert.equal(done.end_reason, 'quiet_period');
    assert.equal(done.credentials.set, false);
    assert.equal(done.app_password.deleted_here, true);
    assert.match(done.app_password.message, /cannot revoke/);
    assert.deepEqual(done.allowed_actions, ['delete', 'remove_history']);
    const row = await s.app.db.selectFrom('mailbox_migrations').select(['password_sealed', 'ended_at']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.password_sealed, null);
    assert.ok(row.ended_at);
    // Completed: the old mailbox is not read any more.
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({ from: 'Pia <pia@customer.test>', to: SUPPORT, subject: 'After', messageId: 'after@customer.test', date: clock.now() }),
        receivedAt: clock.now(),
      },
    ]);
    await poll();
    assert.equal(await copies('after@customer.test'), 0);
  });

  test('remove-history: a wrong count is refused; the right one removes untouched imported conversations and their contacts, resumed after a restart', async () => {
    const { d, te, replies, seed, clock, api, drain, conversationOf } = scene();
    let { s } = scene();
    const t2 = (await conversationOf('t2@customer.test'))!;
    const reply = await api('POST', `/v1/conversations/${t2.id}/messages`, { body: 'We looked into this.' });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    await drain();
    assert.equal((await replies.waitFor(1))[0].to[0], 'tom@customer.test', 'the team replied');
    const disk = d.snapshot(SUPPORT);
    const m = (await api('GET', `/v1/migrations/${id}`)).body;
    // T3 and the late history: nobody wrote in them. T1 got a customer's reply, T2 the team's.
    assert.equal(m.remove_history.confirm_count, 2);
    const wrong = await api('POST', `/v1/migrations/${id}/remove-history`, { confirm_count: 3 });
    assert.equal(wrong.status, 409);
    assert.equal(wrong.body.error.code, 'confirm_count_mismatch');
    assert.equal(wrong.body.error.confirm_count, 2);
    assert.equal((await api('GET', `/v1/migrations/${id}`)).body.state, 'completed', 'nothing changed');
    const t3 = (await conversationOf('t3@customer.test'))!;
    const labelsBefore = await s.app.db
      .selectFrom('conversation_labels')
      .select(['conversation_id', 'label'])
      .where('conversation_id', 'in', [t2.id])
      .execute();

    const started = await api('POST', `/v1/migrations/${id}/remove-history`, { confirm_count: 2 });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.state, 'removing');
    // The server stops before the work is done; the next one continues it.
    await s.stop();
    s = await startTestServer({ clock, testEnv: te });
    scene().s = s;
    await s.app.jobs.stop();
    await drain();
    const removed = await expectState(s, seed.apiKey, id, 'removed');
    assert.equal(removed.remove_history.conversations_deleted, 2);
    assert.equal(removed.remove_history.contacts_deleted, 2);
    assert.equal(await s.app.db.selectFrom('conversations').select('id').where('id', '=', t3.id).executeTakeFirst(), undefined);
    assert.equal(await conversationOf('late@customer.test'), undefined);
    for (const kept of ['t1@customer.test', 't2@customer.test', 'new@customer.test', 'both@customer.test'])
      assert.ok(await conversationOf(kept), `${kept} stays`);
    const emails = (await s.app.db.selectFrom('contact_emails').select('email').where('workspace_id', '=', seed.workspaceId).execute()).map((e) => e.email);
    assert.ok(!emails.includes('tess@customer.test') && !emails.includes('lars@customer.test'), 'contacts left without a conversation are deleted');
    assert.ok(emails.includes('tina@customer.test') && emails.includes('tom@customer.test'), 'contacts with a conversation stay');
    assert.deepEqual(
      await s.app.db.selectFrom('conversation_labels').select(['conversation_id', 'label']).where('conversation_id', 'in', [t2.id]).execute(),
      labelsBefore,
      'labels stay',
    );
    assert.deepEqual(d.snapshot(SUPPORT), disk, 'the old mailbox is unchanged');
    const log = (await api('GET', `/v1/migrations/${id}/activity`)).body.data.map((e: { action: string }) => e.action);
    assert.ok(log.includes('history_removed') && log.includes('remove_history_started') && log.includes('test_message_arrived'));
  });
});
