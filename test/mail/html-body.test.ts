// HTML bodies: mail whose only body is HTML beside attachments or inline images still has its text,
// and HTML nested deeper than any real mail is not read (its parser would take O(n²) of a thread).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { htmlNestsDeeperThan, MAX_HTML_DEPTH } from '../../src/mail/html-limits.js';
import { parseMail, parseMailWithMailparser } from '../../src/mail/parse.js';
import { sanitizeMailHtml } from '../../src/mail/sanitize.js';

const nested = (depth: number, tag = 'div') => `${`<${tag}>`.repeat(depth)}deep${`</${tag}>`.repeat(depth)}`;

async function build(options: Mail.Options): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const info = await transport.sendMail({ from: 'Grace <grace@customer.example>', to: 'support@acme.example', subject: 'Sign-in', ...options });
  return info.message as Buffer;
}

describe('HTML bodies', () => {
  test('HTML beside an attachment, or with an inline image, and no text part: the text is read from the HTML', async () => {
    const html = '<p>Hello,</p><p>I <b>cannot sign in</b> since yesterday.</p><ul><li>Browser: Firefox</li></ul>';
    const withFile = await build({ html, attachments: [{ filename: 'notes.txt', content: 'steps' }] });
    const withImage = await build({
      html: `${html}<img src="cid:shot@customer.example">`,
      attachments: [{ filename: 'shot.png', content: Buffer.from('89504e470d0a1a0a', 'hex'), cid: 'shot@customer.example' }],
    });
    for (const raw of [withFile, withImage]) {
      const mail = await parseMail(raw);
      assert.match(mail.text, /^Hello,\n\nI cannot sign in since yesterday\.\n\n \* Browser: Firefox/);
      assert.ok(mail.html?.includes('<b>cannot sign in</b>'));
      assert.equal(mail.attachments.length, 1);
    }
    // Long lines stay whole: the panel and the widget wrap them to their width.
    const long = `A sentence much longer than eighty characters, as customers write them, ${'and then some more '.repeat(5)}end.`;
    const wide = await parseMail(await build({ html: `<p>${long}</p>`, attachments: [{ filename: 'a.txt', content: 'x' }] }));
    assert.equal(wide.text, long);
    // mailparser alone leaves the text empty for these; the identity of a message stays what it was.
    const alone = await parseMailWithMailparser(withFile);
    assert.equal((await parseMail(withFile)).digest, alone.digest);
  });

  test('a text part is kept as the sender wrote it, and an HTML-only message as mailparser reads it', async () => {
    const both = await parseMail(await build({ text: 'Plain words.', html: '<p>Other <b>words</b></p>', attachments: [{ filename: 'a.txt', content: 'x' }] }));
    assert.equal(both.text, 'Plain words.');
    const htmlOnly = await parseMail(await build({ html: '<p>Only <b>HTML</b></p>' }));
    assert.equal(htmlOnly.text, 'Only HTML');
  });

  test('nesting is counted as an HTML parser counts it', () => {
    assert.equal(htmlNestsDeeperThan(nested(MAX_HTML_DEPTH)), false);
    assert.equal(htmlNestsDeeperThan(nested(MAX_HTML_DEPTH + 1)), true);
    assert.equal(htmlNestsDeeperThan(nested(200_000, 'b')), true);
    // Never closed, still open.
    assert.equal(htmlNestsDeeperThan('<span>x'.repeat(MAX_HTML_DEPTH + 1)), true);
    // Void elements, implied ends and self-closed voids open nothing.
    const wide = [
      '<br><img src=x><hr/><input>'.repeat(5000),
      '<p>one<p>two'.repeat(5000),
      `<ul>${'<li>item'.repeat(5000)}</ul>`,
      `<table>${'<tr><td>a<td>b'.repeat(5000)}</table>`,
      `<dl>${'<dt>t<dd>d'.repeat(5000)}</dl>`,
    ];
    for (const html of wide) assert.equal(htmlNestsDeeperThan(html), false, html.slice(0, 40));
    // Tags in comments, styles and scripts are text to the parser.
    assert.equal(htmlNestsDeeperThan(`<!-- ${'<div>'.repeat(5000)} -->`), false);
    assert.equal(htmlNestsDeeperThan(`<style>${'<div>'.repeat(5000)}</style><p>x</p>`), false);
    assert.equal(htmlNestsDeeperThan(`<script>${'<div>'.repeat(5000)}</script>`), false);
    // ...but what follows them is counted.
    assert.equal(htmlNestsDeeperThan(`<style>p{}</style>${nested(MAX_HTML_DEPTH + 1)}`), true);
    // Upper case, attributes and stray end tags.
    assert.equal(htmlNestsDeeperThan(`${'<DIV class="a>b">'.repeat(MAX_HTML_DEPTH + 1)}`), true);
    assert.equal(htmlNestsDeeperThan(`${'<div>'.repeat(10)}${'</span>'.repeat(100_000)}${'</div>'.repeat(10)}`), false);
    // Text with angle brackets that are no tags.
    assert.equal(htmlNestsDeeperThan('a < b and 3 <4 and <<<<'), false);
  });

  test('HTML nested deeper than any real mail is neither sanitized nor read for its text; the rest of the message is kept', async () => {
    assert.equal(sanitizeMailHtml(nested(200_000)), null);
    assert.ok(sanitizeMailHtml(nested(MAX_HTML_DEPTH))?.includes('deep'));
    const raw = await build({ html: nested(200_000), attachments: [{ filename: 'a.txt', content: 'kept' }] });
    const mail = await parseMail(raw);
    assert.equal(mail.text, `This message's HTML nests elements deeper than ${MAX_HTML_DEPTH} levels and could not be read. The original is kept.`);
    assert.equal(mail.attachments.length, 1);
    assert.equal(mail.subject, 'Sign-in');
  });
});
