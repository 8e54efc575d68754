import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MAX_HTML_DEPTH } from '../../src/mail/html-limits.js';
import { SEND_MAX_ATTEMPTS, SEND_RETRY_DELAYS_MS } from '../../src/mail/outbound.js';
import type { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer, testEnv } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'outbound-secret';
const SMTP_PASSWORD = 'smtp-pw-do-not-leak-42';

describe('replies by e-mail through the channel’s SMTP account', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let sink: SmtpSink;

  before(async () => {
    sink = await startSmtpSink({ username: SINK_LOGIN.username, password: SMTP_PASSWORD });
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET } });
    await s.app.jobs.stop(); // jobs run only when the test drains them
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port, password: SMTP_PASSWORD })).address!;
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  async function customerMail(headers: Record<string, string> = {}) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw: rawMail({ To: address, ...headers }), token: SECRET });
    assert.equal(r.status, 201);
    return r.body.data[0] as { conversation_id: string; message_id: string };
  }

  test('a reply is stored pending with a send job, then mailed with Message-ID, In-Reply-To and References', async () => {
    const first = await customerMail({
      Subject: 'Broken widget',
      'Message-ID': '<o1-a@cust.example>',
      References: '<o1-root@cust.example>',
      'Reply-To': 'Replies <replies@cust.example>',
    });
    const r = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'Thanks, fixing it.', html: '<p>Thanks, <b>fixing</b> it.<img src=x onerror=alert(1)></p>' },
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.status, 'pending');
    assert.equal(r.body.direction, 'out');
    assert.equal(r.body.kind, 'message');
    assert.ok(!r.body.html.includes('onerror'));
    const job = await s.app.db.selectFrom('jobs').selectAll().where('kind', '=', 'email.send').executeTakeFirstOrThrow();
    assert.equal(JSON.parse(job.payload).messageId, r.body.id);

    const count = sink.messages.length;
    await s.app.jobs.drain();
    const mail = (await sink.waitFor(count + 1))[count];
    assert.deepEqual(mail.to, ['replies@cust.example']);
    assert.equal(mail.from, address);
    assert.equal(mail.parsed.from!.value[0].name, 'Acme Support');
    assert.equal(mail.parsed.subject, 'Re: Broken widget');
    assert.equal(mail.parsed.inReplyTo, '<o1-a@cust.example>');
    assert.deepEqual(mail.parsed.references, ['<o1-root@cust.example>', '<o1-a@cust.example>']);
    assert.match(mail.parsed.messageId!, new RegExp(`^<${r.body.id}@`));
    assert.equal(mail.parsed.text!.trim(), 'Thanks, fixing it.');
    // The sink accepts only the channel's login: the sealed password was opened for the send.

    const after = await s.request('GET', `/v1/conversations/${first.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(after.body.status, 'sent');
    assert.ok(after.body.sent_at);
    // The password was unsealed for the send only: it is in no answer, event or log line.
    const channels = await s.request('GET', '/v1/channels', { token: seed.apiKey });
    const events = await s.app.db.selectFrom('events').select('data').execute();
    for (const text of [JSON.stringify(channels.body), JSON.stringify(after.body), s.rawLogs.join(''), events.map((e) => e.data).join('')]) {
      assert.ok(!text.includes(SMTP_PASSWORD));
    }
    // Nothing is sent twice.
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, count + 1);
  });

  test('notes are never mailed and are marked as notes in their event', async () => {
    const first = await customerMail({ Subject: 'Note test' });
    const before = await s.app.db.selectFrom('events').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
    const count = sink.messages.length;
    const r = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'note', body: 'internal: customer is VIP' },
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.kind, 'note');
    assert.equal(r.body.status, null);
    assert.deepEqual(r.body.author, { type: 'member', member_id: seed.ownerId });
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, count);
    // The drain also tells members of the new conversation (realtime-only `notification` events).
    const events = await s.app.db.selectFrom('events').selectAll().where('seq', '>', before.seq).where('type', '!=', 'notification').execute();
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'message.created');
    assert.equal(events[0].is_note, 1);
    assert.equal(events[0].inbox_id, seed.inboxId);
  });

  test('the reply is addressed to the contact by name, encoded: To: "Name" <address>', async () => {
    const first = await customerMail({ From: '"Zoë \\"Z\\" Müller" <zoe@cust.example>', Subject: 'Name please' });
    const count = sink.messages.length;
    const r = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'Hello Zoë' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    await s.app.jobs.drain();
    const mail = (await sink.waitFor(count + 1))[count];
    const to = Array.isArray(mail.parsed.to) ? mail.parsed.to[0] : mail.parsed.to!;
    assert.deepEqual(
      to.value.map((v) => ({ name: v.name, address: v.address })),
      [{ name: 'Zoë "Z" Müller', address: 'zoe@cust.example' }],
    );
    const header = mail.parsed.headerLines.find((h) => h.key === 'to')!.line;
    assert.match(header, /^To: .+ <zoe@cust\.example>$/);
    assert.match(header, /^[\x20-\x7e]+$/, 'the name is encoded (RFC 2047), never raw 8-bit');
  });

  test('a failing SMTP account is retried on the schedule, logged each time, and the message ends failed', async () => {
    const clock = s.clock as ManualClock;
    const first = await customerMail({ Subject: 'Retry me' });
    sink.failWith(451);
    const r = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'This will not go out' } });
    const logsBefore = s.logs.length;
    const attempts = async () =>
      (await s.app.db.selectFrom('messages').select('delivery_attempts').where('id', '=', r.body.id).executeTakeFirstOrThrow()).delivery_attempts;
    for (let attempt = 1; attempt <= SEND_MAX_ATTEMPTS; attempt++) {
      await s.app.jobs.drain();
      assert.equal(await attempts(), attempt, `attempt ${attempt} ran`);
      const msg = await s.request('GET', `/v1/conversations/${first.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
      assert.match(msg.body.error, /sink refuses/);
      if (attempt < SEND_MAX_ATTEMPTS) {
        assert.equal(msg.body.status, 'pending');
        // Not due before its delay has passed.
        clock.advance(SEND_RETRY_DELAYS_MS[attempt - 1] - 1000);
        await s.app.jobs.drain();
        assert.equal(await attempts(), attempt, 'no attempt before the delay');
        clock.advance(1000);
      } else {
        assert.equal(msg.body.status, 'failed');
      }
    }
    const lines = s.logs.slice(logsBefore).filter((l) => l.msg === 'email send failed, retrying');
    assert.equal(lines.length, SEND_MAX_ATTEMPTS);
    assert.deepEqual(
      lines.map((l) => l.attempt),
      [1, 2, 3, 4, 5, 6],
    );
    assert.ok(s.logs.slice(logsBefore).some((l) => l.msg === 'email send failed, message marked failed'));
    assert.ok(!s.rawLogs.join('').includes('cust.example'), 'no recipient addresses in the logs');
    sink.failWith(null);
    clock.advance(24 * 3600_000);
    await s.app.jobs.drain();
    assert.equal(await attempts(), SEND_MAX_ATTEMPTS, 'nothing left to retry');
    const left = await s.app.db.selectFrom('jobs').select('id').where('kind', '=', 'email.send').execute();
    assert.equal(left.length, 0);
  });

  test('an upload the html shows (a pasted picture) goes out as an inline part; one it does not is a file', async () => {
    const first = await customerMail({ Subject: 'Inline picture' });
    const upload = async (filename: string, type: string, bytes: Buffer) => {
      const up = await s.request('POST', `/v1/conversations/${first.conversation_id}/attachments?filename=${filename}`, {
        token: seed.apiKey,
        raw: bytes,
        headers: { 'content-type': type },
      });
      assert.equal(up.status, 201, JSON.stringify(up.body));
      return up.body as { id: string; url: string };
    };
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const picture = await upload('shot.png', 'image/png', png);
    const file = await upload('notes.txt', 'text/plain', Buffer.from('notes'));
    const count = sink.messages.length;
    const r = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { html: `<p>Here: <img src="${picture.url}" alt="shot"></p>`, attachment_ids: [picture.id, file.id] },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const byId = new Map((r.body.attachments as { id: string; inline: boolean; content_id: string | null }[]).map((a) => [a.id, a]));
    assert.deepEqual(byId.get(picture.id), { ...byId.get(picture.id), inline: true, content_id: `${picture.id}@svc` });
    assert.deepEqual(byId.get(file.id), { ...byId.get(file.id), inline: false, content_id: null });
    await s.app.jobs.drain();
    const mail = (await sink.waitFor(count + 1))[count];
    const raw = mail.raw.toString('utf8');
    assert.match(raw, /Content-Type: multipart\/related;/i);
    assert.match(raw, new RegExp(`Content-ID: <${picture.id}@svc>`, 'i'));
    assert.ok(!raw.includes(picture.url), 'the mail names the part by cid:, not by the panel URL');
    const parts = new Map(mail.parsed.attachments.map((a) => [a.filename, a]));
    assert.equal(parts.get('shot.png')?.related, true);
    assert.ok(parts.get('shot.png')?.content.equals(png));
    assert.ok(!parts.get('notes.txt')!.related);
    assert.equal(parts.get('notes.txt')?.contentDisposition, 'attachment');
  });

  test('attachments round-trip: upload, send with the reply, download the same bytes', async () => {
    const first = await customerMail({ Subject: 'Attach' });
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
    const up = await s.request('POST', `/v1/conversations/${first.conversation_id}/attachments?filename=${encodeURIComponent('report ü.pdf')}`, {
      token: seed.apiKey,
      raw: bytes,
      headers: { 'content-type': 'application/pdf' },
    });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    assert.equal(up.body.size, 3000);
    assert.equal(up.body.sha256, createHash('sha256').update(bytes).digest('hex'));
    const count = sink.messages.length;
    const r = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'See attached', attachment_ids: [up.body.id] },
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.attachments[0].id, up.body.id);
    await s.app.jobs.drain();
    const mail = (await sink.waitFor(count + 1))[count];
    assert.equal(mail.parsed.attachments.length, 1);
    assert.equal(mail.parsed.attachments[0].filename, 'report ü.pdf');
    assert.ok(mail.parsed.attachments[0].content.equals(bytes));
    const dl = await fetch(`${s.url}/v1/attachments/${up.body.id}/content`, { headers: { authorization: `Bearer ${seed.apiKey}` } });
    assert.equal(dl.status, 200);
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(bytes));
    assert.match(dl.headers.get('content-disposition')!, /filename\*=UTF-8''report%20%C3%BC\.pdf/);
    // An upload is sent once: reusing it is refused.
    const again = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'again', attachment_ids: [up.body.id] },
    });
    assert.equal(again.status, 400);
  });

  test('HTML nested deeper than any real mail is refused with a clear error; nothing is stored or sent', async () => {
    const first = await customerMail({ Subject: 'Deep HTML' });
    const html = `${'<div>'.repeat(MAX_HTML_DEPTH + 1)}hi${'</div>'.repeat(MAX_HTML_DEPTH + 1)}`;
    const r = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'hi', html } });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'invalid_request');
    assert.match(JSON.stringify(r.body.error), /deeper than 1000 levels/);
    const msgs = await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', first.conversation_id).execute();
    assert.equal(msgs.length, 1);
    assert.equal((await s.app.db.selectFrom('jobs').select('id').where('kind', '=', 'email.send').execute()).length, 0);
  });

  test('a channel without an SMTP account refuses replies with 409 and stores nothing', async () => {
    const other = await seedWorkspace(s.app);
    const ch = await seedEmailChannel(s.app, other);
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(ch.address!)}`, { raw: rawMail({ To: ch.address! }), token: SECRET });
    const conv = r.body.data[0].conversation_id;
    const reply = await s.request('POST', `/v1/conversations/${conv}/messages`, { token: other.apiKey, body: { body: 'hello' } });
    assert.equal(reply.status, 409);
    assert.equal(reply.body.error.code, 'smtp_not_configured');
    const msgs = await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', conv).execute();
    assert.equal(msgs.length, 1);
    const note = await s.request('POST', `/v1/conversations/${conv}/messages`, { token: other.apiKey, body: { kind: 'note', body: 'notes still work' } });
    assert.equal(note.status, 201);
  });
});

describe('a stored reply survives a restart and is sent exactly once', () => {
  test('the send job written with the message runs after the server comes back', async () => {
    const sink = await startSmtpSink(SINK_LOGIN);
    const te = await testEnv({ SVC_INGRESS_SECRET: SECRET });
    try {
      const a = await startTestServer({ testEnv: te });
      await a.app.jobs.stop();
      const seed = await seedWorkspace(a.app);
      const ch = await seedEmailChannel(a.app, seed, { smtpPort: sink.port });
      const inbound = await a.request('POST', `/v1/ingress/email?to=${encodeURIComponent(ch.address!)}`, { raw: rawMail({ To: ch.address! }), token: SECRET });
      const reply = await a.request('POST', `/v1/conversations/${inbound.body.data[0].conversation_id}/messages`, {
        token: seed.apiKey,
        body: { body: 'survives' },
      });
      assert.equal(reply.status, 201);
      await a.stop(); // gone before the job ran
      assert.equal(sink.messages.length, 0);

      const b = await startTestServer({ testEnv: te });
      try {
        await b.app.jobs.stop();
        await b.app.jobs.drain();
        await sink.waitFor(1);
        await b.app.jobs.drain();
        assert.equal(sink.messages.length, 1);
        const msg = await b.app.db.selectFrom('messages').selectAll().where('id', '=', reply.body.id).executeTakeFirstOrThrow();
        assert.equal(msg.delivery_status, 'sent');
      } finally {
        await b.stop();
      }
    } finally {
      await te.cleanup();
      await sink.close();
    }
  });
});
