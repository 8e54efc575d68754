// The migration scan reads header blocks directly (parseHeaderBlock: mailsplit's Headers, libmime,
// addressparser) instead of through mailparser's simpleParser. Both must give the same fields, so
// every tricky block here is read both ways and compared field by field.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DIRECT_HEADER_BLOCK_BYTES, type InboundMail, parseHeaderBlock, parseHeaderBlockWithMailparser } from '../../src/mail/parse.js';
import { ParsePool } from '../../src/mail/parse-pool.js';
import { scanBatchOf, scanParserOf } from '../../src/mailbox-migration/copy/scan.js';
import type { HeaderFetch } from '../../src/mailbox-migration/sources/imap.js';
import { createLogger } from '../../src/platform/log.js';

const b64 = (charset: string, bytes: Buffer) => `=?${charset}?B?${bytes.toString('base64')}?=`;

const CORPUS: { name: string; lines: (string | Buffer)[] }[] = [
  {
    name: 'plain',
    lines: [
      'Message-ID: <a1@example.com>',
      'Date: Tue, 3 Nov 2026 10:00:00 +0100',
      'From: Ann Example <ann@example.com>',
      'To: support@acme.test',
      'Subject: Hello',
    ],
  },
  {
    name: 'encoded words in several charsets',
    lines: [
      `Subject: ${b64('UTF-8', Buffer.from('Grüße aus Köln — ✓'))} =?ISO-8859-1?Q?caf=E9_cr=E8me?=`,
      `From: ${b64('KOI8-R', Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]))} <ivan@example.ru>`,
      'To: =?windows-1252?Q?Ren=E9e_=93quoted=94?= <renee@example.fr>, =?ISO-2022-JP?B?GyRCJUYlOSVIGyhC?= <taro@example.jp>',
      'Cc: =?GB2312?B?1tC5+g==?= <zhong@example.cn>, =?Shift_JIS?B?g2WDWINn?= <sj@example.jp>',
      'Message-ID: <enc@example.com>',
    ],
  },
  {
    name: 'folded lines',
    lines: [
      'Subject: a subject that is',
      '  folded over',
      '\tthree lines',
      'From: "Folded',
      ' Name" <folded@example.com>',
      'References: <r1@example.com>',
      ' <r2@example.com>',
      '\t<r3@example.com>',
      'In-Reply-To:',
      ' <r3@example.com>',
      'Date: Wed, 4 Nov 2026',
      ' 08:15:00 -0500',
    ],
  },
  {
    name: 'groups and several To and Cc headers',
    lines: [
      'From: Team: lead@example.com, "Second, Person" <second@example.com>;',
      'To: Support: support@acme.test;, other@acme.test',
      'To: undisclosed-recipients:;',
      'Cc: "A" <a@example.com>, b@example.com (comment), <c@example.com>',
      'Cc: d@example.com',
      'Reply-To: Replies <replies@example.com>, second@example.com',
    ],
  },
  { name: 'missing date', lines: ['From: nodate@example.com', 'Subject: no date'] },
  { name: 'unreadable date', lines: ['From: x@example.com', 'Date: the day after tomorrow', 'Date: Tue, 3 Nov 2026 10:00:00 +0100'] },
  { name: 'empty date', lines: ['From: x@example.com', 'Date:'] },
  {
    name: 'bad addresses',
    lines: [
      'From: <>',
      'To: not an address, @nodomain, user@, "quoted only"',
      'Cc: <<double@example.com>>, =?utf-8?Q?evil?=@example.com, =?utf-8?B?Q0VP?= <ceo@bank.example>',
      'Reply-To: =?utf-8?Q?a=40b.example?=',
    ],
  },
  { name: 'from without an address', lines: ['From: just a name', 'Subject: x'] },
  { name: 'from as an empty group', lines: ['From: undisclosed-recipients:;', 'Reply-To: Group: member@example.com;'] },
  { name: 'punycode domain', lines: ['From: Post <info@xn--mnchen-3ya.example>', 'To: a@XN--BCHER-KVA.example, b@xn--zz-broken-.example'] },
  {
    name: 'raw 8-bit UTF-8 headers',
    lines: [Buffer.from('Subject: Überweisung für Jörg'), Buffer.from('From: Jörg Müller <joerg@example.de>'), Buffer.from('To: Zoë <zoe@example.com>')],
  },
  {
    name: 'raw Latin-1 bytes',
    lines: [Buffer.from([...Buffer.from('Subject: caf'), 0xe9]), Buffer.from([...Buffer.from('From: Ren'), 0xe9, ...Buffer.from(' <r@example.fr>')])],
  },
  {
    name: 'message ids without brackets, empty, several',
    lines: ['Message-ID: bare-id@example.com', 'In-Reply-To: <one@example.com> <two@example.com>', 'References: three@example.com four@example.com'],
  },
  { name: 'empty message id then another', lines: ['Message-ID:', 'Message-ID: <second@example.com>', 'Subject:', 'Subject: second subject'] },
  { name: 'encoded message id', lines: ['Message-ID: =?utf-8?Q?=3Cenc-id=40example.com=3E?=', 'References: =?utf-8?Q?=3Cref=40example.com=3E?='] },
  {
    name: 'duplicate headers',
    lines: [
      'From: first@example.com',
      'From: second@example.com',
      'Subject: first',
      'Subject: second',
      'Date: Mon, 2 Nov 2026 00:00:00 +0000',
      'Date: Sun, 1 Nov 2026 00:00:00 +0000',
    ],
  },
  { name: 'mbox From line first', lines: ['From sender@example.com Tue Nov  3 10:00:00 2026', 'From: real@example.com', 'Subject: mbox'] },
  { name: 'folded first line', lines: [' leading continuation', 'Subject: after it', 'From: a@example.com'] },
  { name: 'line without colon', lines: ['Subject: x', 'garbage line', 'From: a@example.com'] },
  {
    name: 'automatic headers',
    lines: [
      'From: MAILER-DAEMON@mx.example',
      'Auto-Submitted: auto-replied',
      'Precedence: bulk',
      'List-Id: <list.example.com>',
      'List-Unsubscribe: <mailto:unsub@example.com>',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="x"',
      'X-Autoreply: yes',
    ],
  },
  {
    name: 'delivered-to and x-original-to',
    lines: ['Delivered-To: support@acme.test', 'X-Original-To: <sales@acme.test>', 'To: someone@example.com', 'From: a@example.com'],
  },
  { name: 'control characters', lines: ['Subject: tab\there \u0001 bell\u0007', 'From: "Ctl\u0002" <ctl@example.com>'] },
  {
    name: 'many references',
    lines: [`References: ${Array.from({ length: 120 }, (_, i) => `<ref${i}@example.com>`).join('\r\n ')}`, 'In-Reply-To: <ref119@example.com>'],
  },
  {
    name: 'malformed encoded words',
    lines: ['Subject: =?utf-8?B?broken', 'From: =?unknown-charset?Q?x?= <x@example.com>', 'To: =?utf-8?Q?unterminated <t@example.com>'],
  },
  { name: 'empty block', lines: [] },
];

function block(lines: (string | Buffer)[], ending = '\r\n'): Buffer {
  return Buffer.concat(lines.flatMap((l) => [Buffer.isBuffer(l) ? l : Buffer.from(l), Buffer.from(ending)]));
}

/** Every field the scan and the sync read, and the rest of what parseMail gives of a body-less mail. */
function fields(mail: InboundMail) {
  return {
    messageId: mail.messageId,
    inReplyTo: mail.inReplyTo,
    references: mail.references,
    subject: mail.subject,
    from: mail.from,
    replyTo: mail.replyTo,
    to: mail.to,
    cc: mail.cc,
    headerRecipients: mail.headerRecipients,
    date: mail.date?.toISOString() ?? null,
    automatic: mail.automatic,
    unreadable: mail.unreadable,
    text: mail.text,
    html: mail.html,
    attachments: mail.attachments.length,
    digest: mail.digest,
  };
}

describe('header blocks read directly, as simpleParser reads them', () => {
  for (const c of CORPUS) {
    for (const [ending, label] of [
      ['\r\n', 'CRLF'],
      ['\n', 'LF'],
    ] as const) {
      test(`${c.name} (${label})`, async () => {
        const raw = block(c.lines, ending);
        assert.deepEqual(fields(await parseHeaderBlock(raw)), fields(await parseHeaderBlockWithMailparser(raw)));
      });
    }
  }

  test('a block followed by its empty line and a body: only the headers count (the body is not read)', async () => {
    const raw = Buffer.from('Subject: head\r\nFrom: a@example.com\r\n\r\nFrom: body@example.com\r\nSubject: not a header\r\n');
    const { text, digest, ...direct } = fields(await parseHeaderBlock(raw));
    const { text: bodyText, digest: _, ...byMailparser } = fields(await parseHeaderBlockWithMailparser(raw));
    assert.deepEqual(direct, byMailparser);
    assert.equal(direct.subject, 'head');
    assert.equal(text, '');
    assert.equal(bodyText, 'From: body@example.com\nSubject: not a header');
  });

  test('a block without a final line break', async () => {
    const raw = Buffer.from('Subject: last line\r\nFrom: a@example.com');
    assert.deepEqual(fields(await parseHeaderBlock(raw)), fields(await parseHeaderBlockWithMailparser(raw)));
  });

  test('an unreadable Date is no date (mailparser would date it to the time of parsing)', async () => {
    const mail = await parseHeaderBlock(block(['From: x@example.com', 'Date: not a date']));
    assert.equal(mail.date, null);
    assert.equal((await parseHeaderBlockWithMailparser(block(['From: x@example.com', 'Date: not a date']))).date, null);
  });

  test('decoded values are what a person reads', async () => {
    const mail = await parseHeaderBlock(block(CORPUS[1].lines));
    // Whitespace between two encoded words is not part of the text (RFC 2047 section 6.2).
    assert.equal(mail.subject, 'Grüße aus Köln — ✓café crème');
    assert.equal(mail.from.name, 'Привет');
    assert.deepEqual(
      mail.to.map((a) => a.name),
      ['Renée “quoted”', 'テスト'],
    );
  });

  test('a block over the direct limit is read by mailparser, with the same answer', async () => {
    const big = block(['From: big@example.com', `Subject: ${'x'.repeat(DIRECT_HEADER_BLOCK_BYTES)}`]);
    assert.deepEqual(fields(await parseHeaderBlock(big)), fields(await parseHeaderBlockWithMailparser(big)));
  });
});

describe("a scan's header blocks read on the parse worker, in batches", () => {
  const scope = { migrationId: 'mig_1', folder: 'INBOX', uidValidity: '77' };
  // The corpus as a FETCH gives it (both line endings), with flags, dates (one unreadable), sizes and labels.
  const fetched = (): HeaderFetch[] =>
    CORPUS.flatMap((c, i) => [
      { uid: 2 * i + 1, flags: ['\\Seen'], internalDate: new Date(Date.UTC(2026, 0, 1 + i)), size: 1000 + i, headers: block(c.lines) },
      { uid: 2 * i + 2, flags: [], internalDate: i === 0 ? new Date(Number.NaN) : null, size: 7, headers: block(c.lines, '\n'), labels: ['\\Inbox', 'Kunden'] },
    ]);

  test('the worker gives exactly the items this thread reads, in order', async () => {
    const here = await scanParserOf(parseHeaderBlock)(scope, fetched());
    const pool = new ParsePool(createLogger({ write: () => {} }), { size: 1 });
    try {
      const batch = scanBatchOf(scope, fetched());
      let fellBack = false;
      const read = pool.scanItems(batch, async () => {
        fellBack = true;
        return [];
      });
      // Moved to the worker, not copied.
      assert.equal(batch.blocks.byteLength, 0);
      const items = await read;
      assert.equal(fellBack, false);
      assert.deepEqual(items, here);
      assert.equal(items.length, CORPUS.length * 2);
    } finally {
      await pool.close();
    }
  });

  test('a worker that fails leaves the batch to this thread', async () => {
    const pool = new ParsePool(createLogger({ write: () => {} }), { size: 1, timeoutMs: 0 });
    const blocks = fetched();
    try {
      const items = await pool.scanItems(scanBatchOf(scope, blocks), () => scanParserOf(parseHeaderBlock)(scope, blocks));
      assert.deepEqual(items, await scanParserOf(parseHeaderBlock)(scope, fetched()));
    } finally {
      await pool.close();
    }
  });

  test('a block too large to read directly is not put in a batch', () => {
    const large = { uid: 1, flags: [], internalDate: null, size: 1, headers: Buffer.alloc(DIRECT_HEADER_BLOCK_BYTES + 1, 'a') };
    assert.throws(() => scanBatchOf(scope, [large]), /read on its own/);
  });
});
