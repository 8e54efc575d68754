// A corpus of broken and hostile mail: each one is either refused with a clear answer or stored
// whole (conversation, message, original .eml), never a crash, a hang or a half-written conversation.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MAX_ATTACHMENTS } from '../../src/mail/parse.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { ingressPort, SmtpDialog, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SECRET = 'bad-input-secret';
const MAX = 4 * 1024 * 1024;

function multipartWithParts(count: number, to: string): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    parts.push(
      `--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="f${i}.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\nAAEC\r\n`,
    );
  }
  return Buffer.from(
    `From: many@cust.example\r\nTo: ${to}\r\nSubject: ${count} attachments\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nSee the files.\r\n${parts.join('')}--B--\r\n`,
  );
}

function deeplyNested(depth: number, to: string): Buffer {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += `--b${i}\r\nContent-Type: multipart/mixed; boundary="b${i + 1}"\r\n\r\n`;
    close = `--b${i + 1}--\r\n` + close;
  }
  return Buffer.from(
    `From: nest@cust.example\r\nTo: ${to}\r\nSubject: nested ${depth}\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b0"\r\n\r\n${open}--b${depth}\r\nContent-Type: text/plain\r\n\r\ndeep inside\r\n--b${depth}--\r\n${close}--b0--\r\n`,
  );
}

function corpus(to: string): { name: string; raw: Buffer }[] {
  const h = (lines: string[], body: string | Buffer = 'body\r\n') =>
    Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n'), Buffer.isBuffer(body) ? body : Buffer.from(body)]);
  return [
    {
      name: 'unterminated multipart',
      raw: h(
        [`To: ${to}`, 'From: a@cust.example', 'Subject: x', 'Content-Type: multipart/mixed; boundary="zz"'],
        '--zz\r\nContent-Type: text/plain\r\n\r\nhalf a message',
      ),
    },
    { name: 'multipart without boundary', raw: h([`To: ${to}`, 'From: a@cust.example', 'Content-Type: multipart/alternative'], 'no parts here') },
    {
      name: 'unknown charset with 8-bit bytes',
      raw: h(
        [`To: ${to}`, 'From: a@cust.example', 'Content-Type: text/plain; charset=x-no-such-charset', 'Content-Transfer-Encoding: 8bit'],
        Buffer.from([0x48, 0x69, 0x20, 0xff, 0xfe, 0xc3, 0x28, 0x0d, 0x0a]),
      ),
    },
    {
      name: 'invalid UTF-8 in headers and broken encoded words',
      raw: Buffer.concat([
        Buffer.from(`To: ${to}\r\nFrom: =?utf-8?B?!!!notbase64?= <a@cust.example>\r\nSubject: =?x-bad?Q?=ZZ=?= `),
        Buffer.from([0xc3, 0x28, 0xa0, 0xa1]),
        Buffer.from('\r\n\r\nbody\r\n'),
      ]),
    },
    {
      name: 'UTF-7 body with markup',
      raw: h([`To: ${to}`, 'From: a@cust.example', 'Content-Type: text/html; charset=utf-7'], '+ADw-script+AD4-alert(1)+ADw-/script+AD4-'),
    },
    { name: 'wrong transfer encoding', raw: h([`To: ${to}`, 'From: a@cust.example', 'Content-Transfer-Encoding: base64'], '@@@@ not base64 at all @@@@') },
    {
      name: 'NUL bytes everywhere',
      raw: Buffer.from(
        `To: ${to}\r\nFrom: "N\u0000ul" <nul@cust.example>\r\nSubject: a\u0000b\r\nMessage-ID: <nul\u0000id@cust.example>\r\n\r\nbody\u0000with nul\r\n`,
        'latin1',
      ),
    },
    { name: 'no From at all', raw: h([`To: ${to}`, 'Subject: anonymous']) },
    { name: 'invalid From address', raw: h([`To: ${to}`, 'From: this is not an address', 'Subject: bad from']) },
    { name: 'From with only junk', raw: h([`To: ${to}`, 'From: <@@@>', 'Reply-To: also not valid']) },
    { name: 'group syntax From', raw: h([`To: ${to}`, 'From: Team: one@cust.example, two@cust.example;']) },
    { name: 'no Message-ID', raw: h([`To: ${to}`, 'From: a@cust.example', 'Subject: no id']) },
    { name: 'huge header line', raw: h([`To: ${to}`, 'From: a@cust.example', `X-Long: ${'a'.repeat(200_000)}`]) },
    { name: 'header only, no body', raw: Buffer.from(`To: ${to}\r\nFrom: a@cust.example\r\nSubject: nothing`) },
    { name: 'random binary', raw: randomBytes(20_000) },
    {
      name: 'hostile HTML',
      raw: h(
        [`To: ${to}`, 'From: a@cust.example', 'Content-Type: text/html'],
        '<img src="javascript:alert(1)"><a href="javascript:x">x</a><iframe src="https://evil.example"></iframe><style>*{}</style><form><input></form><p style="background:url(https://t.example/x)">hi</p>',
      ),
    },
    {
      name: 'cid image',
      raw: h(
        [`To: ${to}`, 'From: a@cust.example', 'MIME-Version: 1.0', 'Content-Type: multipart/related; boundary="R"'],
        '--R\r\nContent-Type: text/html\r\n\r\n<p><img src="cid:logo@x"></p>\r\n--R\r\nContent-Type: image/png\r\nContent-ID: <logo@x>\r\nContent-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--R--\r\n',
      ),
    },
    {
      name: 'attachment with hostile name and type',
      raw: h(
        [`To: ${to}`, 'From: a@cust.example', 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="M"'],
        '--M\r\nContent-Type: text/plain\r\n\r\nsee\r\n--M\r\nContent-Type: text/html;;; "\r\nContent-Disposition: attachment; filename="../../etc/passwd\u0001"\r\n\r\n<script>x</script>\r\n--M--\r\n',
      ),
    },
    { name: '3,000 attachments', raw: multipartWithParts(3000, to) },
    { name: '6,000 MIME parts (past the parser limit)', raw: multipartWithParts(6000, to) },
    {
      name: 'HTML nested 300,000 deep',
      raw: h([`To: ${to}`, 'From: a@cust.example', 'Content-Type: text/html'], `${'<b>'.repeat(300_000)}deep${'</b>'.repeat(300_000)}`),
    },
    { name: 'multiparts nested 300 deep', raw: deeplyNested(300, to) },
    { name: 'multiparts nested 3,000 deep', raw: deeplyNested(3000, to) },
  ];
}

describe('bad input: a corpus of broken mail', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET, SVC_INGRESS_MAX_BYTES: String(MAX) } });
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed)).address!;
  });
  after(() => s.stop());

  test('every message is stored whole or refused with a 4xx; nothing half-written', async () => {
    const outcomes: Record<string, { status: number; body: any }> = {};
    for (const { name, raw } of corpus(address)) {
      const res = await fetch(`${s.url}/v1/ingress/email?to=${encodeURIComponent(address)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'message/rfc822' },
        body: new Uint8Array(raw),
        signal: AbortSignal.timeout(30_000),
      });
      const body = await res.json();
      outcomes[name] = { status: res.status, body };
      assert.ok(res.status === 201 || (res.status >= 400 && res.status < 500), `${name}: ${res.status} ${JSON.stringify(body)}`);
    }
    // This corpus is all storable: every one was kept.
    for (const [name, o] of Object.entries(outcomes)) assert.equal(o.status, 201, name);

    const db = s.app.db;
    const message = async (name: string) => {
      const id = outcomes[name].body.data[0].message_id as string;
      const m = await db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const files = await db.selectFrom('attachments').selectAll().where('message_id', '=', id).execute();
      return { m, files };
    };

    const many = await message('3,000 attachments');
    assert.equal(many.files.length, MAX_ATTACHMENTS);
    assert.equal(many.m.attachments_omitted, 3000 - MAX_ATTACHMENTS);
    const tooMany = await message('6,000 MIME parts (past the parser limit)');
    assert.match(tooMany.m.body, /could not be read/);
    assert.equal(tooMany.m.subject, '6000 attachments');
    const deep = await message('multiparts nested 300 deep');
    assert.match(deep.m.body, /deep inside/);
    await message('multiparts nested 3,000 deep');

    // Its HTML is not read (an HTML parser takes O(n²) of the main thread for it): no HTML, the original kept.
    const deepHtml = await message('HTML nested 300,000 deep');
    assert.equal(deepHtml.m.html, null);
    assert.match(deepHtml.m.body, /could not be read/);
    const hostile = await message('hostile HTML');
    assert.ok(hostile.m.html === null || !/javascript:|<iframe|<style|<form|<input|url\(/i.test(hostile.m.html));
    const utf7 = await message('UTF-7 body with markup');
    assert.ok(!/<script/i.test(utf7.m.html ?? '') && !/<script/i.test(utf7.m.body));
    const cid = await message('cid image');
    assert.equal(cid.files.length, 1);
    assert.ok(cid.m.html!.includes(`/v1/attachments/${cid.files[0].id}/content`));
    const named = await message('attachment with hostile name and type');
    assert.ok(!named.files[0].filename.includes('/'));
    const dl = await fetch(`${s.url}/v1/attachments/${named.files[0].id}/content`, { headers: { authorization: `Bearer ${seed.apiKey}` } });
    assert.equal(dl.headers.get('content-type'), 'application/octet-stream', 'HTML attachments are never served as HTML');
    assert.match(dl.headers.get('content-disposition')!, /^attachment;/);
    await dl.arrayBuffer();

    const anonymous = await message('no From at all');
    const contact = await db.selectFrom('contacts').selectAll().where('id', '=', anonymous.m.author_contact_id!).executeTakeFirstOrThrow();
    assert.equal(contact.name, 'Unknown sender');
    const nul = await message('NUL bytes everywhere');
    assert.ok(!nul.m.body.includes('\u0000'));

    // Nothing half-written: every conversation has its messages, every inbound message its .eml.
    const convs = await db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    for (const c of convs) {
      const n = await db.selectFrom('messages').select('id').where('conversation_id', '=', c.id).execute();
      assert.ok(n.length >= 1);
    }
    const inbound = await db
      .selectFrom('messages')
      .select(['id', 'raw_storage_key as raw'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('direction', '=', 'in')
      .execute();
    assert.equal(inbound.length, Object.keys(outcomes).length);
    assert.ok(inbound.every((m) => m.raw));
    // And the server is still healthy.
    assert.equal((await s.request('GET', '/readyz')).status, 200);
  });

  test('over SMTP too: broken mail gets a 250 after commit, the connection stays usable', async () => {
    const { dialog } = await SmtpDialog.open(ingressPort(s));
    try {
      await dialog.send('EHLO test.example');
      for (const { name, raw } of corpus(address).filter((c) => /binary|unterminated|NUL|nested 300/.test(c.name))) {
        assert.match(await dialog.send('MAIL FROM:<>'), /^250/, name);
        assert.match(await dialog.send(`RCPT TO:<${address}>`), /^250/, name);
        assert.match(await dialog.send('DATA'), /^354/, name);
        assert.match(await dialog.data(raw), /^250 /, name);
      }
      assert.match(await dialog.send('MAIL FROM:<x@cust.example>'), /^250/);
      assert.match(await dialog.send('RCPT TO:<not-an-address>'), /^5\d\d /);
    } finally {
      dialog.close();
    }
  });
});
