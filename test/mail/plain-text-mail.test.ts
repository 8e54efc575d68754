// parseMail reads a message that is one plain-text part directly (parsePlainTextMail) instead of
// through mailparser's simpleParser. Both must give the same stored result, so every message here is
// read both ways and compared field by field; the shapes the direct read must leave to mailparser
// are checked to be left.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DIRECT_MAIL_BYTES, parseMail, parseMailWithMailparser, parsePlainTextMail, parseSmallPlainTextMail } from '../../src/mail/parse.js';
import { buildMail } from '../helpers/mailbox.js';

const HEAD = ['Message-ID: <p1@example.com>', 'Date: Tue, 3 Nov 2026 10:00:00 +0100', 'From: Ann Example <ann@example.com>', 'To: support@acme.test'];

/** A message from header lines and a body, joined by `eol`. */
function message(lines: string[], body: string | Buffer, eol = '\r\n'): Buffer {
  return Buffer.concat([Buffer.from(lines.join(eol) + eol + eol, 'latin1'), typeof body === 'string' ? Buffer.from(body, 'latin1') : body]);
}

const utf8 = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

/** Messages the direct read takes. */
const DIRECT: { name: string; raw: () => Promise<Buffer> | Buffer }[] = [
  {
    name: 'nodemailer, quoted-printable with soft line breaks',
    raw: () =>
      buildMail({
        from: 'Customer 7 <customer7@bulk.test>',
        to: 'support@acme.test',
        subject: 'Re: Question 7',
        messageId: 't7-m1@bulk.test',
        inReplyTo: 't7-m0@acme.test',
        references: ['t7-m0@acme.test'],
        date: new Date('2026-11-03T10:00:00Z'),
        text: `A message of a support conversation.\n\n${'Some text of a support conversation. '.repeat(20)}`,
      }),
  },
  {
    name: 'nodemailer, non-ASCII text',
    raw: () =>
      buildMail({
        from: '"Jürgen Groß" <j@example.de>',
        to: 'support@acme.test',
        subject: 'Grüße — ✓ 日本語',
        date: new Date('2026-11-03T10:00:00Z'),
        text: `Hallo,\n\nthank you for your message; mit freundlichen Grüßen — ✓ ${'an ordinary line of text, '.repeat(12)}\n\n-- \nJürgen\n`,
      }),
  },
  {
    name: '7bit, CRLF',
    raw: () => message([...HEAD, 'Subject: hi', 'Content-Type: text/plain; charset=us-ascii', 'Content-Transfer-Encoding: 7bit'], 'Hello\r\n\r\nthere\r\n'),
  },
  { name: 'LF line ends only', raw: () => message([...HEAD, 'Subject: lf', 'Content-Type: text/plain'], 'one\ntwo\n\n\n', '\n') },
  { name: 'no content type at all', raw: () => message([...HEAD, 'Subject: bare'], 'A body with no MIME headers.\r\n') },
  {
    name: 'quoted charset, upper case, 8BIT',
    raw: () => message([...HEAD, 'Content-Type: TEXT/PLAIN; charset="UTF-8"', 'Content-Transfer-Encoding: 8BIT'], `${utf8('Grüße ✓')}\r\n`),
  },
  { name: 'utf8 without dash, trailing semicolon', raw: () => message([...HEAD, 'Content-Type: text/plain; charset=utf8;'], 'x\r\n') },
  {
    name: 'invalid UTF-8 bytes declared UTF-8',
    raw: () => message([...HEAD, 'Content-Type: text/plain; charset=utf-8'], Buffer.from([0x61, 0xe9, 0x62, 0xff, 0xfe, 0x0d, 0x0a, 0xc3])),
  },
  { name: 'NUL bytes and bare CR', raw: () => message([...HEAD, 'Subject: nul'], 'a\u0000b\rc\r\r\nd\r\n') },
  {
    name: 'quoted-printable edge cases',
    raw: () =>
      message(
        [...HEAD, 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable'],
        'caf=C3=A9 =3D =XY =\r\nsoft  \t\r\nline=\nlf soft=20\r\nlowercase =c3=a9 and=',
      ),
  },
  { name: 'binary transfer encoding with a lone dot line', raw: () => message([...HEAD, 'Content-Transfer-Encoding: binary'], 'before\r\n.\r\nafter') },
  { name: 'empty body', raw: () => message([...HEAD, 'Subject: empty'], '') },
  { name: 'blank lines only', raw: () => message([...HEAD, 'Subject: blank'], '\r\n  \r\n\t\r\n') },
  { name: 'no blank line after the headers', raw: () => Buffer.from(`${HEAD.join('\r\n')}\r\nSubject: headers only`, 'latin1') },
  {
    name: 'automatic, encoded words, groups, references',
    raw: () =>
      message(
        [
          'Message-ID: <auto@example.com>',
          'From: =?UTF-8?B?w5xtbMOkdXQ=?= <MAILER-DAEMON@example.com>',
          'To: Team: a@acme.test, "B, C" <b@acme.test>;',
          'Cc: c@example.com',
          'Reply-To: back@example.com',
          'Auto-Submitted: auto-replied',
          'References: <r1@example.com>',
          ' <r2@example.com>',
          'In-Reply-To: <r2@example.com>',
          'Delivered-To: support@acme.test',
          'Subject: =?ISO-8859-1?Q?caf=E9?=',
          'Date: not a date',
          'Content-Type: text/plain;',
          ' charset=us-ascii',
        ],
        'Out of office.\r\n',
      ),
  },
];

/** Messages the direct read leaves to mailparser. */
const LEFT: { name: string; raw: () => Promise<Buffer> | Buffer }[] = [
  { name: 'format=flowed', raw: () => message([...HEAD, 'Content-Type: text/plain; charset=utf-8; format=flowed'], 'a \r\nb\r\n') },
  { name: 'another charset', raw: () => message([...HEAD, 'Content-Type: text/plain; charset=iso-8859-1'], Buffer.from([0x63, 0x61, 0x66, 0xe9])) },
  { name: 'base64', raw: () => message([...HEAD, 'Content-Type: text/plain', 'Content-Transfer-Encoding: base64'], Buffer.from('hello').toString('base64')) },
  { name: 'a disposition', raw: () => message([...HEAD, 'Content-Type: text/plain', 'Content-Disposition: attachment; filename=a.txt'], 'file') },
  { name: 'html', raw: () => message([...HEAD, 'Content-Type: text/html; charset=utf-8'], '<p>hi</p>') },
  { name: 'a name parameter', raw: () => message([...HEAD, 'Content-Type: text/plain; name=a.txt'], 'x') },
  { name: 'a comment in the type', raw: () => message([...HEAD, 'Content-Type: text/plain (note); charset=utf-8'], 'x') },
  { name: 'two content types', raw: () => message([...HEAD, 'Content-Type: text/plain', 'Content-Type: text/html'], 'x') },
  { name: 'an unknown transfer encoding', raw: () => message([...HEAD, 'Content-Transfer-Encoding: x-uuencode'], 'x') },
  {
    name: 'multipart with an attachment',
    raw: () =>
      buildMail({
        from: 'a@example.com',
        to: 'b@example.com',
        subject: 'file',
        date: new Date('2026-11-03T10:00:00Z'),
        text: 'see file',
        attachments: [{ filename: 'file.pdf', content: Buffer.alloc(300, 0x41), contentType: 'application/pdf' }],
      }),
  },
  { name: 'a header block over 64 KiB', raw: () => message([...HEAD, `X-Long: ${'a'.repeat(70_000)}`], 'x') },
];

describe('plain-text mail read directly', () => {
  for (const c of DIRECT) {
    test(`${c.name}: read directly, the same as mailparser`, async () => {
      const raw = await c.raw();
      const direct = await parsePlainTextMail(raw);
      assert.ok(direct, 'read directly');
      assert.deepEqual(direct, await parseMailWithMailparser(raw));
      assert.deepEqual(await parseMail(raw), direct);
    });
  }
  for (const c of LEFT) {
    test(`${c.name}: left to mailparser`, async () => {
      const raw = await c.raw();
      assert.equal(await parsePlainTextMail(raw), null);
      assert.deepEqual(await parseMail(raw), await parseMailWithMailparser(raw));
    });
  }
});

// The migration worker reads plain-text mail on its own thread (parseSmallPlainTextMail) and hands
// the rest to its parse worker: what it reads there must be what the worker would answer.
describe('plain-text mail read on the calling thread', () => {
  for (const c of DIRECT) {
    test(`${c.name}: read here, the same as parseMail`, async () => {
      const raw = await c.raw();
      assert.deepEqual(await parseSmallPlainTextMail(raw), await parseMail(raw));
    });
  }
  for (const c of LEFT) {
    test(`${c.name}: left to the parse worker`, async () => {
      assert.equal(await parseSmallPlainTextMail(await c.raw()), null);
    });
  }
  test('a plain-text message larger than DIRECT_MAIL_BYTES is left to the parse worker', async () => {
    const line = `${'x'.repeat(76)}\r\n`;
    const large = message(HEAD, line.repeat(Math.ceil(DIRECT_MAIL_BYTES / line.length) + 1));
    assert.ok(await parsePlainTextMail(large), 'the direct read takes it');
    assert.equal(await parseSmallPlainTextMail(large), null);
    const small = message(HEAD, line.repeat(10));
    assert.deepEqual(await parseSmallPlainTextMail(small), await parseMail(small));
  });
});
