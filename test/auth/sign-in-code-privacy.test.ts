import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { findOrCreatePerson, SIGN_IN_CODE_JOB } from '../../src/people/service.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const smtpEnv = (port: number) => ({ SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(port), SVC_SMTP_TLS: 'none', SVC_SMTP_FROM: 'svc@example.test' });

describe('POST /v1/auth/code does not tell which addresses have accounts', () => {
  let sink: SmtpSink;
  let s: TestServer;
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  before(async () => {
    sink = await startSmtpSink();
    s = await startTestServer({ clock, env: smtpEnv(sink.port) });
    await findOrCreatePerson(s.app, { email: 'member@example.com' });
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  const ask = (email: string) => s.request('POST', '/v1/auth/code', { body: { email } });
  const storedJobs = async () => (await s.app.db.selectFrom('jobs').select('payload').where('kind', '=', SIGN_IN_CODE_JOB).execute()).length;

  test('an address with an account and one without get the same answers, the sixth one 429 for both', async () => {
    for (const email of ['member@example.com', 'nobody@example.com']) {
      for (let i = 0; i < 5; i++) {
        const r = await ask(email);
        assert.equal(r.status, 202, email);
        assert.deepEqual(r.body, { status: 'sent' });
      }
    }
    const known = await ask('member@example.com');
    const unknown = await ask('nobody@example.com');
    assert.equal(known.status, 429);
    assert.equal(unknown.status, 429);
    assert.deepEqual(known.body, unknown.body);
    assert.equal(unknown.body.error.code, 'rate_limited');
    assert.equal(known.headers.get('retry-after'), unknown.headers.get('retry-after'));
    // Case and spaces do not make a fresh budget.
    assert.equal((await ask('  NoBody@Example.com ')).status, 429);
    await s.app.jobs.drain();
    clock.advance(61 * MINUTE);
    assert.equal((await ask('nobody@example.com')).status, 202);
    await s.app.jobs.drain();
  });

  test('both store one job and nothing else; only the account gets a code and a mail, after the answer', async () => {
    await s.app.jobs.drain();
    const mails = sink.messages.length;
    const codes = async (email: string) => (await s.app.db.selectFrom('sign_in_codes').select('id').where('email', '=', email).execute()).length;
    const codesBefore = await codes('member@example.com');
    clock.advance(61 * MINUTE);
    const jobRows = () => s.app.db.selectFrom('jobs').select(['id', 'payload']).where('kind', '=', SIGN_IN_CODE_JOB).execute();
    for (const email of ['member@example.com', 'nobody@example.com']) {
      const seen = new Set((await jobRows()).map((r) => r.id));
      assert.equal((await ask(email)).status, 202);
      // The answer came before the code was made: the job holds the address only. (The job may
      // already have run, and an earlier address's job may still be waiting: compare new rows only.)
      for (const row of (await jobRows()).filter((r) => !seen.has(r.id))) assert.deepEqual(JSON.parse(String(row.payload)), { email });
    }
    await s.app.jobs.drain();
    assert.equal(await storedJobs(), 0);
    await sink.waitFor(mails + 1);
    assert.deepEqual(
      sink.messages.slice(mails).map((m) => m.to),
      [['member@example.com']],
    );
    assert.equal(await codes('member@example.com'), codesBefore + 1);
    assert.equal(await codes('nobody@example.com'), 0);
  });
});

describe('the answer does not wait for the mail server', () => {
  // A mail server that accepts connections and never greets: a request that waited for it would
  // answer only once the mailer gave up and hung up.
  const held: net.Socket[] = [];
  let hungUp = 0;
  const silent = net.createServer((socket) => {
    held.push(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => hungUp++);
  });
  let s: TestServer;
  before(async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    s = await startTestServer({ env: smtpEnv((silent.address() as AddressInfo).port) });
    await findOrCreatePerson(s.app, { email: 'member@example.com' });
  });
  after(async () => {
    await s.stop();
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  test('202 while the mail is still on its way; the mail is tried after the answer', async () => {
    const r = await s.request('POST', '/v1/auth/code', { body: { email: 'member@example.com' } });
    assert.equal(r.status, 202);
    assert.equal(hungUp, 0, 'no mail conversation ended before the answer');
    // The job (stored before the answer) connects to the mail server and waits for its greeting.
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(hungUp, 0);
    const pending = await s.app.db.selectFrom('jobs').select('id').where('kind', '=', SIGN_IN_CODE_JOB).execute();
    assert.equal(pending.length, 1, 'the job stays until the mail is done');
    // The mail server goes away: the job logs it and ends.
    for (const socket of held) socket.destroy();
    while (!s.logs.some((l) => l.msg === 'mail not sent')) await new Promise((resolve) => setTimeout(resolve, 20));
  });
});
