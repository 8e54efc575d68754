// Unusual but real mail keeps its words and its files: a corpus (./unusual-corpus.ts) read by the
// parser, and the same mail through ingress as the API shows it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseMail } from '../../src/mail/parse.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { UNUSUAL_MAIL } from './unusual-corpus.js';

describe('unusual mail keeps its words', () => {
  for (const c of UNUSUAL_MAIL) {
    test(`parsed: ${c.name}`, async () => {
      const mail = await parseMail(Buffer.from(c.raw));
      assert.equal(mail.unreadable, null);
      for (const words of c.words) assert.ok(mail.text.includes(words), `"${words}" is in the text:\n${mail.text}`);
      assert.deepEqual(
        mail.attachments.map((a) => [a.filename, a.contentType]),
        c.files,
      );
      for (const a of mail.attachments) assert.ok(a.content.length > 0, `${a.filename} has its content`);
    });
  }

  test('the enclosed message is kept whole as the .eml file', async () => {
    const forwarded = UNUSUAL_MAIL.find((c) => c.name.startsWith('a message that is a forwarded message'))!;
    const mail = await parseMail(Buffer.from(forwarded.raw));
    const eml = mail.attachments[0].content.toString();
    assert.match(eml, /^From: Ada Customer <ada@customer\.example>/);
    assert.match(eml, /My kettle leaks since Monday\./);
    const again = await parseMail(mail.attachments[0].content);
    assert.equal(again.subject, 'Broken kettle');
  });

  describe('through ingress, as the API shows them', () => {
    let s: TestServer;
    let seed: Seed;
    let address: string;
    before(async () => {
      s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
      await s.app.jobs.stop();
      seed = await seedWorkspace(s.app);
      address = (await seedEmailChannel(s.app, seed)).address!;
    });
    after(() => s?.stop());

    test('no text part and no file of the corpus is lost', async () => {
      for (const c of UNUSUAL_MAIL) {
        const raw = Buffer.from(`To: ${address}\r\nMessage-ID: <${c.name.length}-${Math.random()}@unusual.example>\r\n${c.raw}`);
        const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw, token: INGRESS_SECRET });
        assert.equal(r.status, 201, `${c.name}: ${JSON.stringify(r.body)}`);
        const { conversation_id, message_id } = r.body.data[0];
        const m = await s.request('GET', `/v1/conversations/${conversation_id}/messages/${message_id}`, { token: seed.apiKey });
        assert.equal(m.status, 200);
        for (const words of c.words) assert.ok(m.body.body.includes(words), `${c.name}: "${words}" in ${m.body.body}`);
        assert.deepEqual(
          m.body.attachments.map((a: any) => [a.filename, a.content_type]),
          c.files,
          c.name,
        );
      }
    });
  });
});
