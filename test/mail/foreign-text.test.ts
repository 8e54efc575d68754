// Issue 32, items 8 and 9: a stranger's Subject cannot write lines of its own into the server's
// notification mail, and a file name cannot hide its real extension behind bidirectional controls.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ManualClock } from '../../src/platform/clock.js';
import { MINUTE } from '../../src/platform/clock.js';
import { oneLine, withoutBidiControls } from '../../src/platform/foreign-text.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, rloAttachmentBody, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const word = (text: string) => `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`;
const INJECTED = 'ACTION REQUIRED: your session expired, sign in again at http://evil.example/login';

test('oneLine folds every control and line separator; withoutBidiControls makes each override visible', () => {
  assert.equal(oneLine('Order 5\r\n\r\nACTION\tREQUIRED\u2028now\u0085x'), 'Order 5 ACTION REQUIRED now x');
  assert.equal(withoutBidiControls('invoice\u202Efdp.exe'), 'invoice_fdp.exe');
  assert.equal(withoutBidiControls('a\u2066b\u2069c\u200fd\u061ce'), 'a_b_c_d_e');
  assert.equal(withoutBidiControls('ünïcödé نص.pdf'), 'ünïcödé نص.pdf');
});

describe('foreign text at the ingress', () => {
  let s: TestServer;
  let seed: Seed;
  let sink: SmtpSink;
  let address: string;

  before(async () => {
    sink = await startSmtpSink();
    s = await startTestServer({
      env: {
        SVC_INGRESS_SECRET: INGRESS_SECRET,
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(sink.port),
        SVC_SMTP_TLS: 'none',
        SVC_SMTP_FROM: 'svc@notify.example',
      },
    });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed)).address!;
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  test('an encoded Subject and name with CR/LF are stored on one line, and the notification mail quotes them', async () => {
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const prefs = await s.request('PATCH', '/v1/me/notification-preferences', { token: agent.token, body: { new_conversation: { email: true } } });
    assert.equal(prefs.status, 200);
    (s.clock as ManualClock).advance(6 * MINUTE); // no panel of the agent's open: notifications go by mail
    const stored = await deliverMail(
      s,
      address,
      { Subject: word(`Order 5\r\n\r\n${INJECTED}`), From: `${word('Eve\r\nSecurity Team')} <eve@evil.example>` },
      `Hi.\r\n\r\n${INJECTED}\r\n`,
    );
    const conv = await s.request('GET', `/v1/conversations/${stored.conversation_id}`, { token: seed.apiKey });
    assert.equal(conv.body.subject, `Order 5 ${INJECTED}`);
    const messages = await s.request('GET', `/v1/conversations/${stored.conversation_id}/messages`, { token: seed.apiKey });
    assert.equal(messages.body.data[0].subject, `Order 5 ${INJECTED}`);
    const contact = await s.request('GET', `/v1/contacts/${conv.body.contact_id}`, { token: seed.apiKey });
    assert.equal(contact.body.name, 'Eve Security Team');

    await s.app.jobs.drain();
    const [mail] = (await sink.waitFor(1)).filter((m) => m.to.includes(agent.email));
    assert.ok(mail, 'the agent was mailed');
    const lines = (mail.parsed.text ?? '').split(/\r?\n/);
    const own = lines.filter((l) => l.startsWith('ACTION') || l.trimStart().startsWith('ACTION'));
    assert.deepEqual(own, [], `no line of the mail starts with the stranger's words:\n${mail.parsed.text}`);
    assert.ok(
      lines.some((l) => l.startsWith('- ') && l.includes(`: “Order 5 ${INJECTED}”`)),
      `the subject stays quoted inside its notification line:\n${mail.parsed.text}`,
    );
  });

  test('a file name with a right-to-left override is stored, listed and downloaded with the override made visible', async () => {
    const boundary = 'rlo-boundary';
    const stored = await deliverMail(
      s,
      address,
      { Subject: 'Invoice', 'MIME-Version': '1.0', 'Content-Type': `multipart/mixed; boundary="${boundary}"` },
      rloAttachmentBody(boundary, 'See attached.'),
    );
    const messages = await s.request('GET', `/v1/conversations/${stored.conversation_id}/messages`, { token: seed.apiKey });
    const [file] = messages.body.data[0].attachments;
    assert.equal(file.filename, 'invoice_fdp.exe');
    const row = await s.app.db.selectFrom('attachments').select('filename').where('id', '=', file.id).executeTakeFirstOrThrow();
    assert.equal(row.filename, 'invoice_fdp.exe');
    const download = await fetch(`${s.url}${file.url}`, { headers: { authorization: `Bearer ${seed.apiKey}` } });
    assert.equal(download.status, 200);
    const disposition = download.headers.get('content-disposition') ?? '';
    assert.ok(!/%E2%80%AE/i.test(disposition) && !disposition.includes('\u202e'), disposition);
    assert.match(disposition, /invoice_fdp\.exe/);
    await download.arrayBuffer();

    // A name stored before this rule (written directly) is shown safely too.
    await s.app.db.updateTable('attachments').set({ filename: 'report\u202Excod.scr' }).where('id', '=', file.id).execute();
    const again = await s.request('GET', `/v1/conversations/${stored.conversation_id}/messages`, { token: seed.apiKey });
    assert.equal(again.body.data[0].attachments[0].filename, 'report_xcod.scr');
  });
});
