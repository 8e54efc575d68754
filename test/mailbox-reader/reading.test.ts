// Channels that read their own mailbox, against real Dovecot servers (one with IDLE, one without):
// the connection test before saving, live reading by IDLE and by polling, Sent mail joining its
// conversation as outgoing, mail that also came through the ingress stored once, only allowed
// commands in the rawlog, and a bad password backing off with one state change and recovering.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ALLOWED_COMMANDS } from '../../src/mailbox-migration/sources/imap.js';
import type { ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { buildMail, newMessageId } from '../helpers/mailbox.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const IDLE_USER = 'help@acme.test';
const POLL_USER = 'sales@acme.test';
const PASSWORD = 'mailbox-pass-1';

const until = <T>(what: string, read: () => Promise<T | undefined | false>, timeoutMs = 5000): Promise<T> => waitUntil(read, timeoutMs, what);

/** Command names Dovecot recorded from the client ("<time> <tag> <COMMAND> …", and DONE ending IDLE). */
function commandNames(lines: string[]): string[] {
  return lines.flatMap((line) => {
    if (/^\d+\.\d+ DONE\s*$/i.test(line)) return ['DONE'];
    const m = /^\d+\.\d+ (\S+) (UID \S+|\S+)/.exec(line);
    return m ? [m[2].toUpperCase()] : [];
  });
}

describe('mailbox reader', { skip: dovecotMissing }, () => {
  let s: TestServer;
  let idleBox: Dovecot;
  let pollBox: Dovecot;
  let seed: Seed;
  let idleChannel: string;
  let pollChannel: string;
  const existing = newMessageId('customer.test');

  before(async () => {
    idleBox = await startDovecot();
    pollBox = await startDovecot({ capabilities: 'IMAP4rev1 LITERAL+ SASL-IR LOGIN-REFERRALS SPECIAL-USE' });
    idleBox.addUser(IDLE_USER, PASSWORD);
    pollBox.addUser(POLL_USER, PASSWORD);
    // Mail from before the reader connects is history: a migration's job, never taken by the reader.
    idleBox.deliver(IDLE_USER, 'INBOX', [
      { raw: await buildMail({ from: 'Old <old@customer.test>', to: IDLE_USER, subject: 'Old news', messageId: existing, date: new Date() }) },
    ]);
    s = await startTestServer({ env: { SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_MAILBOX_READER_POLL_SECONDS: '2', SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app);
    idleChannel = (await seedEmailChannel(s.app, seed, { address: IDLE_USER })).id;
    pollChannel = (await seedEmailChannel(s.app, seed, { address: POLL_USER })).id;
  });
  after(async () => {
    await s?.stop();
    await idleBox?.stop();
    await pollBox?.stop();
  });

  const channelOf = async (id: string) => {
    const r = await s.request('GET', '/v1/channels', { token: seed.apiKey });
    return r.body.data.find((c: { id: string }) => c.id === id);
  };
  const imap = (d: Dovecot, user: string, password = PASSWORD) => ({ kind: 'imap', host: d.host, port: d.port, tls: 'none', username: user, password });
  const messagesWith = (rfcId: string) =>
    s.app.db.selectFrom('messages').select(['id', 'conversation_id', 'direction', 'details']).where('mail_message_id', '=', rfcId).execute();

  test('a wrong password is refused with the step and the server’s words; nothing is saved', async () => {
    const r = await s.request('PATCH', `/v1/channels/${idleChannel}`, { token: seed.apiKey, body: { reading: imap(idleBox, IDLE_USER, 'wrong-password') } });
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.equal(r.body.error.code, 'mailbox_unreachable');
    assert.equal(r.body.error.failed_step, 'login');
    assert.match(r.body.error.message, /login failed: .*(Authentication failed|AUTHENTICATIONFAILED)/i);
    assert.ok(!JSON.stringify(r.body).includes('wrong-password'));
    assert.equal((await channelOf(idleChannel)).reading, null);
    const bad = await s.request('PATCH', `/v1/channels/${idleChannel}`, {
      token: seed.apiKey,
      body: { reading: { kind: 'imap', host: 'bad host', username: 'x', password: 'y' } },
    });
    assert.equal(bad.status, 400);
  });

  test('reading by IDLE: mail appended after connecting appears within seconds; earlier mail is left to migrations', async () => {
    const r = await s.request('PATCH', `/v1/channels/${idleChannel}`, { token: seed.apiKey, body: { reading: imap(idleBox, IDLE_USER) } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.reading, { kind: 'imap', host: idleBox.host, port: idleBox.port, tls: 'none', username: IDLE_USER, password_set: true });
    assert.ok(!JSON.stringify(r.body).includes(PASSWORD), 'the password is never shown');
    const connected = await until('the reader to connect', async () => {
      const c = await channelOf(idleChannel);
      return c.reader.state === 'idle' && c;
    });
    assert.equal(connected.reader.mode, 'idle');
    assert.equal(connected.reader.error, null);
    const id = newMessageId('customer.test');
    idleBox.deliver(IDLE_USER, 'INBOX', [
      { raw: await buildMail({ from: 'Ada <ada@customer.test>', to: IDLE_USER, subject: 'Printer on fire', messageId: id, date: new Date() }), isNew: true },
    ]);
    const [m] = await until('the new mail', async () => (await messagesWith(id)).length > 0 && messagesWith(id)).catch(async (e) => {
      console.log(
        JSON.stringify(s.logs.filter((l) => /mailbox|imap/i.test(l.msg))),
        await s.app.db.selectFrom('mailbox_reader_folders').selectAll().execute(),
        await channelOf(idleChannel),
        idleBox.rawlogCommands(IDLE_USER),
      );
      throw e;
    });
    assert.equal(m.direction, 'in');
    assert.equal((await messagesWith(existing)).length, 0, 'mail from before connecting is not read');
    await until('last_read_at', async () => (await channelOf(idleChannel)).reader.last_read_at);
  });

  test('Sent mail joins its conversation as outgoing; svc’s copy of the same mail from the ingress is stored once', async () => {
    const question = newMessageId('customer.test');
    // The customer's mail reaches svc through the ingress first, then the reader finds it in INBOX.
    const raw = await buildMail({ from: 'Bo <bo@customer.test>', to: IDLE_USER, subject: 'Refund', messageId: question, date: new Date() });
    const ingress = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(IDLE_USER)}`, { raw, token: INGRESS_SECRET });
    assert.equal(ingress.status, 201, JSON.stringify(ingress.body));
    const answer = newMessageId('acme.test');
    idleBox.deliver(IDLE_USER, 'Sent', [
      {
        raw: await buildMail({
          from: IDLE_USER,
          to: 'bo@customer.test',
          subject: 'Re: Refund',
          messageId: answer,
          inReplyTo: question,
          references: [question],
          date: new Date(),
        }),
        flags: 'S',
      },
    ]);
    idleBox.deliver(IDLE_USER, 'Junk', [{ raw: await buildMail({ from: 'spam@spam.test', to: IDLE_USER, subject: 'Win', date: new Date() }), isNew: true }]);
    idleBox.deliver(IDLE_USER, 'INBOX', [{ raw, isNew: true }]);
    const [sent] = await until('the sent mail', async () => (await messagesWith(answer)).length > 0 && messagesWith(answer));
    assert.equal(sent.direction, 'out');
    assert.equal(sent.conversation_id, ingress.body.data[0].conversation_id);
    assert.equal(JSON.parse(sent.details!).sent_from_mailbox, true);
    // The INBOX copy is read after Sent in the same pass: by now it was seen, and stored once.
    await until('INBOX read', async () => {
      const f = await s.app.db
        .selectFrom('mailbox_reader_folders')
        .select('last_uid')
        .where('channel_id', '=', idleChannel)
        .where('role', '=', 'inbox')
        .executeTakeFirst();
      return f && f.last_uid >= 3;
    });
    assert.equal((await messagesWith(question)).length, 1);
    const spam = await s.app.db.selectFrom('messages').select('id').where('subject', '=', 'Win').execute();
    assert.equal(spam.length, 0, 'spam is never read');
  });

  test('reading by polling on a server without IDLE', async () => {
    const r = await s.request('PATCH', `/v1/channels/${pollChannel}`, { token: seed.apiKey, body: { reading: imap(pollBox, POLL_USER) } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await until('the reader to poll', async () => (await channelOf(pollChannel)).reader.state === 'polling');
    const id = newMessageId('customer.test');
    pollBox.deliver(POLL_USER, 'INBOX', [
      { raw: await buildMail({ from: 'Cy <cy@customer.test>', to: POLL_USER, subject: 'Quote please', messageId: id, date: new Date() }), isNew: true },
    ]);
    await until('the polled mail', async () => (await messagesWith(id)).length === 1);
  });

  test('the rawlog of every session holds only allowed commands: nothing marked, moved or deleted', async () => {
    for (const [d, user, idle] of [
      [idleBox, IDLE_USER, true],
      [pollBox, POLL_USER, false],
    ] as const) {
      const names = commandNames(d.rawlogCommands(user));
      assert.ok(names.includes('EXAMINE') && names.includes('UID FETCH'), names.join(' '));
      assert.ok(!names.includes('SELECT'));
      for (const n of names) assert.ok(ALLOWED_COMMANDS.has(n.replace(/^UID /, '')) || (idle && (n === 'IDLE' || n === 'DONE')), `${n} was sent`);
      assert.equal(names.includes('IDLE'), idle);
      for (const line of d.rawlogCommands(user).filter((l) => /FETCH/i.test(l))) assert.doesNotMatch(line, /BODY\[|RFC822\)|RFC822\.TEXT/i);
    }
  });

  test('a wrong password: needs attention once with the step and the server’s words, backs off, recovers by itself', async () => {
    const clock = s.clock as ManualClock;
    const warned = () => s.logs.filter((l) => l.msg === 'mailbox reader failed; retrying with backoff' && l.channel_id === pollChannel);
    await pollBox.setPassword(POLL_USER, 'changed-by-admin');
    pollBox.kick(POLL_USER);
    const failing = await until('needs_attention', async () => {
      const c = await channelOf(pollChannel);
      return c.reader.state === 'needs_attention' && c;
    });
    assert.ok(failing.reader.retry_at);
    const firstRetry = Date.parse(failing.reader.retry_at) - clock.now().getTime();
    assert.equal(firstRetry, 60_000, 'the first wait is a minute');
    clock.advance(61_000);
    const again = await until(
      'the second failure',
      async () => {
        const c = await channelOf(pollChannel);
        return c.reader.error?.step === 'login' && Date.parse(c.reader.retry_at) - clock.now().getTime() === 120_000 && c;
      },
      10_000,
    );
    assert.match(again.reader.error.message, /Authentication failed|AUTHENTICATIONFAILED/i);
    assert.ok(!JSON.stringify(again).includes('changed-by-admin'));
    assert.equal(warned().length, 1, 'said once, not at every retry');
    await pollBox.setPassword(POLL_USER, PASSWORD);
    clock.advance(121_000);
    await until('recovery', async () => (await channelOf(pollChannel)).reader.state === 'polling', 10_000);
    assert.equal(warned().length, 1);
    const c = await channelOf(pollChannel);
    assert.equal(c.reader.error, null);
  });

  test('connection tests are limited: 5 per channel in 10 minutes, then 429', async () => {
    const other = (await seedEmailChannel(s.app, seed, { address: 'limits@acme.test' })).id;
    for (let i = 0; i < 5; i++) {
      const r = await s.request('PATCH', `/v1/channels/${other}`, { token: seed.apiKey, body: { reading: imap(idleBox, IDLE_USER, `wrong-${i}`) } });
      assert.equal(r.status, 422);
    }
    const r = await s.request('PATCH', `/v1/channels/${other}`, { token: seed.apiKey, body: { reading: imap(idleBox, IDLE_USER) } });
    assert.equal(r.status, 429);
    assert.ok(Number(r.headers.get('retry-after')) > 0);
    assert.equal((await channelOf(other)).reading, null);
  });

  test('reading: null stops reading', async () => {
    const r = await s.request('PATCH', `/v1/channels/${pollChannel}`, { token: seed.apiKey, body: { reading: null } });
    assert.equal(r.status, 200);
    assert.equal(r.body.reading, null);
    assert.equal(r.body.reader, null);
  });
});
