// Which mail is automatic (auto-replies, newsletters and list mail, delivery reports): one rule for
// inbound mail and for the mailbox migration's scan, which reads only some header fields.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseHeaderBlock, parseMail } from '../../src/mail/parse.js';
import { SCAN_HEADER_FIELDS } from '../../src/mailbox-migration/copy/scan.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, rawMail, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

function report(type: string | null): Record<string, string> {
  return { 'MIME-Version': '1.0', 'Content-Type': `multipart/report;${type === null ? '' : ` report-type=${type};`} boundary="B"` };
}
const REPORT_BODY = [
  '--B',
  'Content-Type: text/plain',
  '',
  'A report.',
  '--B',
  'Content-Type: message/delivery-status',
  '',
  'Reporting-MTA: dns; mx.example',
  '--B--',
  '',
].join('\r\n');

const CASES: { name: string; headers: Record<string, string>; body?: string; automatic: boolean }[] = [
  { name: 'a person writing', headers: {}, automatic: false },
  { name: 'List-Id only', headers: { 'List-Id': 'Product news <news.vendor.example>' }, automatic: true },
  { name: 'List-Unsubscribe only', headers: { 'List-Unsubscribe': '<https://vendor.example/u/1>, <mailto:u@vendor.example>' }, automatic: true },
  {
    name: 'List-Unsubscribe with List-Unsubscribe-Post',
    headers: { 'List-Unsubscribe': '<https://shop.example/u/2>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    automatic: true,
  },
  { name: 'Precedence: list', headers: { Precedence: 'list' }, automatic: true },
  { name: 'Precedence: bulk', headers: { Precedence: 'bulk' }, automatic: true },
  { name: 'Precedence: junk', headers: { Precedence: 'junk' }, automatic: true },
  { name: 'Precedence: first-class', headers: { Precedence: 'first-class' }, automatic: false },
  { name: 'Auto-Submitted: auto-replied', headers: { 'Auto-Submitted': 'auto-replied' }, automatic: true },
  { name: 'Auto-Submitted: auto-generated with a comment', headers: { 'Auto-Submitted': 'auto-generated (vacation)' }, automatic: true },
  { name: 'Auto-Submitted: no', headers: { 'Auto-Submitted': 'no' }, automatic: false },
  { name: 'X-Autoreply: yes', headers: { 'X-Autoreply': 'yes' }, automatic: true },
  { name: 'X-Autorespond', headers: { 'X-Autorespond': 'vacation' }, automatic: true },
  { name: 'a delivery report', headers: report('delivery-status'), body: REPORT_BODY, automatic: true },
  { name: 'a read receipt', headers: report('"disposition-notification"'), body: REPORT_BODY, automatic: true },
  { name: 'a multipart/report of another type', headers: report('feedback-report'), body: REPORT_BODY, automatic: false },
  { name: 'a multipart/report without a type', headers: report(null), body: REPORT_BODY, automatic: false },
  { name: 'from MAILER-DAEMON', headers: { From: 'Mail Delivery System <MAILER-DAEMON@mx.example>' }, automatic: true },
];

/** Only the named header fields of a raw message, as IMAP's BODY.PEEK[HEADER.FIELDS (…)] returns them. */
function headerFields(raw: Buffer, fields: readonly string[]): Buffer {
  const head = raw.toString('latin1').split('\r\n\r\n')[0];
  const wanted = new Set(fields.map((f) => f.toLowerCase()));
  const kept = head.split(/\r\n(?![ \t])/).filter((line) => wanted.has(line.slice(0, line.indexOf(':')).trim().toLowerCase()));
  return Buffer.from(`${kept.join('\r\n')}\r\n`, 'latin1');
}

describe('automatic mail: one rule for inbound mail and the migration scan', () => {
  test('auto-replies, newsletters and list mail, delivery reports and read receipts are automatic; other reports are not', async () => {
    for (const c of CASES) {
      const mail = await parseMail(rawMail({ To: 'support@acme.example', ...c.headers }, c.body));
      assert.equal(mail.automatic, c.automatic, c.name);
    }
  });

  test('the scan fetches every header field the rule reads, so its headers give the same answer', async () => {
    for (const c of CASES) {
      const headers = headerFields(rawMail({ To: 'support@acme.example', ...c.headers }, c.body), SCAN_HEADER_FIELDS);
      assert.equal((await parseHeaderBlock(headers)).automatic, c.automatic, c.name);
    }
  });

  describe('through the ingress', () => {
    let s: TestServer;
    let seed: Seed;
    let address: string;
    before(async () => {
      s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
      await s.app.jobs.stop();
      seed = await seedWorkspace(s.app);
      address = (await seedEmailChannel(s.app, seed)).address!;
    });
    after(async () => {
      await s?.stop();
    });

    test('a newsletter is stored as automatic and does not reopen a closed conversation', async () => {
      const first = await deliverMail(s, address, { Subject: 'Order 7', 'Message-ID': '<order-7@customer.example>' });
      const closed = await s.request('PATCH', `/v1/conversations/${first.conversation_id}`, { token: seed.apiKey, body: { status: 'closed' } });
      assert.equal(closed.body.status, 'closed');
      // A list message that happens to reference the conversation (a digest quoting it, say).
      const news = await deliverMail(s, address, {
        Subject: 'Our news',
        'Message-ID': '<news-1@vendor.example>',
        References: '<order-7@customer.example>',
        'List-Unsubscribe': '<https://vendor.example/u/9>',
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      });
      assert.equal(news.conversation_id, first.conversation_id);
      const conversation = await s.request('GET', `/v1/conversations/${first.conversation_id}`, { token: seed.apiKey });
      assert.equal(conversation.body.status, 'closed');
      const messages = await s.request('GET', `/v1/conversations/${first.conversation_id}/messages`, { token: seed.apiKey });
      assert.equal(messages.body.data.find((m: { id: string }) => m.id === news.message_id).automatic, true);
    });
  });
});
