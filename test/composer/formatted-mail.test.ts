// Formatted replies (issue 34): the API stores the sanitized html as the one representation and
// makes the plain text from it; the mail goes out as multipart/alternative with both, checked here
// in the raw MIME an SMTP sink received.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'formatted-secret';
const SMTP_PASSWORD = 'smtp-pw-formatted';

const FORMATTED_HTML =
  '<p>Hello <strong>Ana</strong>, see <a href="https://docs.example/setup">the setup guide</a> or https://plain.example.</p>' +
  '<ul><li><p>first <em>step</em></p></li><li><p>second step</p><ul><li><p>nested</p></li></ul></li></ul>' +
  '<ol><li><p>one</p></li><li><p>two</p></li></ol>' +
  '<blockquote><p>You wrote this</p><p>and this</p></blockquote>' +
  '<p>Run <code>npm ci</code> then mail <a href="mailto:help@acme.example">help@acme.example</a>.</p>';

const FORMATTED_TEXT = [
  'Hello Ana, see the setup guide (https://docs.example/setup) or https://plain.example.',
  '',
  '- first step',
  '- second step',
  '  - nested',
  '',
  '1. one',
  '2. two',
  '',
  '> You wrote this',
  '>',
  '> and this',
  '',
  'Run npm ci then mail help@acme.example.',
].join('\n');

describe('formatted replies: sanitized html and a plain part made from it', () => {
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

  async function customerMail(subject: string) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({ To: address, Subject: subject, 'Message-ID': `<${subject.replace(/\W/g, '')}@cust.example>` }),
      token: SECRET,
    });
    assert.equal(r.status, 201);
    return r.body.data[0].conversation_id as string;
  }

  async function sent() {
    const count = sink.messages.length;
    await s.app.jobs.drain();
    return (await sink.waitFor(count + 1))[count];
  }

  test('html alone is enough: stored body is the plain text, the mail is multipart/alternative with both parts', async () => {
    const conversation = await customerMail('Formatted one');
    const html = `${FORMATTED_HTML}<p onclick="steal()">x<script>alert(1)</script><iframe src="https://evil.example"></iframe></p>`;
    const r = await s.request('POST', `/v1/conversations/${conversation}/messages`, { token: seed.apiKey, body: { html } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.body, `${FORMATTED_TEXT}\n\nx`);
    for (const bad of ['onclick', '<script', 'alert(1)', '<iframe']) assert.ok(!r.body.html.includes(bad), bad);

    const mail = await sent();
    const raw = mail.raw.toString('utf8');
    assert.match(raw, /^Content-Type: multipart\/alternative;/im);
    // Exactly one text/plain and one text/html part, plain first (the preferred one last).
    const types = [...raw.matchAll(/^Content-Type: (text\/(?:plain|html))/gim)].map((m) => m[1].toLowerCase());
    assert.deepEqual(types, ['text/plain', 'text/html']);
    assert.equal(mail.parsed.text!.replace(/\r\n/g, '\n').trim(), `${FORMATTED_TEXT}\n\nx`);
    const sentHtml = String(mail.parsed.html);
    assert.match(sentHtml, /<strong>Ana<\/strong>/);
    assert.match(sentHtml, /<a href="https:\/\/docs\.example\/setup"[^>]*>the setup guide<\/a>/);
    assert.match(sentHtml, /<blockquote><p>You wrote this<\/p>/);
    assert.match(sentHtml, /<code>npm ci<\/code>/);
    for (const bad of ['onclick', '<script', 'alert(1)', '<iframe']) assert.ok(!sentHtml.includes(bad), bad);
  });

  test('with both body and html, the plain part is made from the html (the two cannot disagree)', async () => {
    const conversation = await customerMail('Formatted two');
    const r = await s.request('POST', `/v1/conversations/${conversation}/messages`, {
      token: seed.apiKey,
      body: { body: 'something else entirely', html: '<p>Refund <b>sent</b>.</p><ul><li>receipt</li></ul>' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.body, 'Refund sent.\n\n- receipt');
    const mail = await sent();
    assert.equal(mail.parsed.text!.trim(), 'Refund sent.\n\n- receipt');
    assert.ok(!mail.raw.toString('utf8').includes('something else entirely'));
  });

  test('a plain body alone still goes out as text/plain only', async () => {
    const conversation = await customerMail('Plain one');
    const r = await s.request('POST', `/v1/conversations/${conversation}/messages`, { token: seed.apiKey, body: { body: 'Just text\n- not a list' } });
    assert.equal(r.status, 201);
    assert.equal(r.body.html, null);
    const mail = await sent();
    assert.match(mail.raw.toString('utf8'), /^Content-Type: text\/plain/im);
    assert.equal(mail.parsed.html, false);
    assert.equal(mail.parsed.text!.trim(), 'Just text\n- not a list');
  });

  test('a formatted note keeps its html, gets its plain text, and is never mailed', async () => {
    const conversation = await customerMail('Note formatted');
    const count = sink.messages.length;
    const r = await s.request('POST', `/v1/conversations/${conversation}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'note', html: '<p>Check <a href="https://crm.example/42">the CRM</a></p>' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.body, 'Check the CRM (https://crm.example/42)');
    assert.match(r.body.html, /<a href="https:\/\/crm\.example\/42"/);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, count);
  });

  test('empty html, or neither body nor html, is a 400 that stores nothing', async () => {
    const conversation = await customerMail('Empty ones');
    const before = await s.app.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    for (const body of [{ html: '<p> </p><script>x</script>' }, { html: '<p><br></p>' }, {}, { body: '   ' }]) {
      const r = await s.request('POST', `/v1/conversations/${conversation}/messages`, { token: seed.apiKey, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    const afterCount = await s.app.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(afterCount.n), Number(before.n));
  });
});
