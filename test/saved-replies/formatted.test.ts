// Formatted saved replies and signatures (issue 34): html in, sanitized as replies are, the plain
// text made from it; rendered with escaped values; a formatted signature in both parts of the mail.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'formatted-replies-ingress';

describe('formatted saved replies and signatures', () => {
  let s: TestServer;
  let seed: Seed;
  let sink: SmtpSink;
  let address: string;
  let agent: { personId: string; token: string };

  before(async () => {
    sink = await startSmtpSink({ username: SINK_LOGIN.username, password: SINK_LOGIN.password });
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET } });
    await s.app.jobs.stop(); // mail goes out only when a test drains the jobs
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    await s.app.db.updateTable('people').set({ name: 'Grace Hopper' }).where('id', '=', agent.personId).execute();
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  async function customerMail(from: string, subject: string) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({ To: address, From: from, Subject: subject }),
      token: SECRET,
    });
    assert.equal(r.status, 201);
    return r.body.data[0].conversation_id as string;
  }

  const HOSTILE =
    '<p onclick="alert(1)">Hi <strong>{{contact.first_name}}</strong>, see <a href="https://acme.example/faq">the FAQ</a>:</p>' +
    '<ul><li><p>one</p></li><li><p><em>two</em></p></li></ul><blockquote><p>quoted</p></blockquote>' +
    '<p>Run <code>reset</code><script>alert(2)</script><a href="javascript:alert(3)">x</a><img src="javascript:alert(4)" onerror="alert(5)"></p>';
  const PLAIN = 'Hi {{contact.first_name}}, see the FAQ (https://acme.example/faq):\n\n- one\n- two\n\n> quoted\n\nRun resetx';

  test('html alone is enough: stored sanitized, the plain body made from it; body alone makes it plain again', async () => {
    const made = await s.request('POST', '/v1/saved-replies', { token: agent.token, body: { name: 'Faq', html: HOSTILE } });
    assert.equal(made.status, 201);
    assert.equal(made.body.body, PLAIN);
    const html: string = made.body.html;
    assert.match(
      html,
      /^<p>Hi <strong>\{\{contact\.first_name\}\}<\/strong>, see <a href="https:\/\/acme\.example\/faq" rel="noopener noreferrer nofollow" target="_blank">the FAQ<\/a>:<\/p>/,
    );
    assert.match(html, /<ul><li><p>one<\/p><\/li><li><p><em>two<\/em><\/p><\/li><\/ul><blockquote><p>quoted<\/p><\/blockquote><p>Run <code>reset<\/code>/);
    for (const bad of [/script/i, /onclick/i, /onerror/i, /javascript:/i, /<img/i]) assert.doesNotMatch(html, bad);
    const read = await s.request('GET', `/v1/saved-replies/${made.body.id}`, { token: agent.token });
    assert.deepEqual([read.body.body, read.body.html], [PLAIN, html]);
    // The list's search reads the plain text, not the markup.
    const found = await s.request('GET', '/v1/saved-replies?q=quoted', { token: agent.token });
    assert.deepEqual(
      found.body.data.map((r: { id: string }) => r.id),
      [made.body.id],
    );
    assert.equal((await s.request('GET', '/v1/saved-replies?q=strong', { token: agent.token })).body.data.length, 0);

    // Both given: html wins, as on the reply routes.
    const both = await s.request('PATCH', `/v1/saved-replies/${made.body.id}`, {
      token: agent.token,
      body: { body: 'ignored', html: '<p><em>Now</em> formatted</p>' },
    });
    assert.equal(both.status, 200);
    assert.deepEqual([both.body.body, both.body.html], ['Now formatted', '<p><em>Now</em> formatted</p>']);
    // A name alone keeps the text.
    const renamed = await s.request('PATCH', `/v1/saved-replies/${made.body.id}`, { token: agent.token, body: { name: 'Faq2' } });
    assert.equal(renamed.body.html, '<p><em>Now</em> formatted</p>');
    const plain = await s.request('PATCH', `/v1/saved-replies/${made.body.id}`, { token: agent.token, body: { body: 'Plain now' } });
    assert.deepEqual([plain.body.body, plain.body.html], ['Plain now', null]);
  });

  test('bad html is refused with a 400 that names it, and nothing is stored', async () => {
    const before = (await s.request('GET', '/v1/saved-replies', { token: agent.token })).body.data.length;
    const cases: [unknown, RegExp][] = [
      [{ name: 'Empty', html: '<p><script>x</script></p>' }, /html must not be empty|body must not be empty/],
      [{ name: 'None' }, /expected shape/],
      [{ name: 'Unknown', html: '<p>Hi {{contact.age}}</p>' }, /contact\.age/],
      [{ name: 'Long', html: `<p>${'x'.repeat(10_001)}</p>` }, /at most 10000/],
      [{ name: 'Huge', html: `<p>${'<b>x</b>'.repeat(8000)}</p>` }, /.+/],
    ];
    for (const [body, message] of cases) {
      const r = await s.request('POST', '/v1/saved-replies', { token: agent.token, body });
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 60));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, message);
    }
    assert.equal((await s.request('GET', '/v1/saved-replies', { token: agent.token })).body.data.length, before);
  });

  test('render-reply gives the formatted reply’s html with escaped values, for the composer to insert', async () => {
    const conversation = await customerMail('Ada Lovelace <ada@cust.example>', 'Formatted');
    const contactId = (await s.app.db.selectFrom('conversations').select('contact_id').where('id', '=', conversation).executeTakeFirstOrThrow()).contact_id;
    await s.app.db.updateTable('contacts').set({ name: '<img src=x onerror=alert(1)> & Co' }).where('id', '=', contactId).execute();
    const reply = await s.request('POST', '/v1/saved-replies', {
      token: agent.token,
      body: { name: 'Hello', html: '<p>Hi <strong>{{contact.name}}</strong>, from {{member.first_name|us}} and {{inbox.name}}</p><ul><li><p>a</p></li></ul>' },
    });
    const r = await s.request('POST', `/v1/conversations/${conversation}/render-reply`, { token: agent.token, body: { saved_reply_id: reply.body.id } });
    assert.equal(r.status, 200);
    assert.equal(r.body.html, '<p>Hi <strong>&#60;img src=x onerror=alert(1)&#62; &#38; Co</strong>, from Grace and Support</p><ul><li><p>a</p></li></ul>');
    assert.equal(r.body.body, 'Hi <img src=x onerror=alert(1)> & Co, from Grace and Support\n\n- a');
    const text = await s.request('POST', `/v1/conversations/${conversation}/render-reply`, { token: agent.token, body: { body: 'Hi {{contact.first_name}}' } });
    assert.equal(text.body.html, null);
  });

  test('a formatted signature is formatted in the html part and faithful in the plain part of the mail', async () => {
    const conversation = await customerMail('Ada Lovelace <ada@cust.example>', 'Signed formatted');
    const put = await s.request('PUT', '/v1/me/signature', {
      token: agent.token,
      body: {
        html: '<p><strong>{{member.name}}</strong><br>Support · <a href="https://acme.example/help">Help centre</a></p><ul><li><p>Mon–Fri</p></li></ul>',
      },
    });
    assert.equal(put.status, 200);
    assert.equal(put.body.body, '{{member.name}}\nSupport · Help centre (https://acme.example/help)\n\n- Mon–Fri');
    assert.match(
      put.body.html,
      /^<p><strong>\{\{member\.name\}\}<\/strong><br \/>Support · <a href="https:\/\/acme\.example\/help" rel="noopener noreferrer nofollow" target="_blank">Help centre<\/a><\/p><ul>/,
    );
    const got = await s.request('GET', '/v1/me/signature', { token: agent.token });
    assert.deepEqual([got.body.body, got.body.html], [put.body.body, put.body.html]);
    const inbox = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/signature`, {
      token: seed.ownerToken,
      body: { html: '<p><em>{{inbox.name}}</em> team</p>' },
    });
    assert.deepEqual([inbox.body.body, inbox.body.html], ['{{inbox.name}} team', '<p><em>{{inbox.name}}</em> team</p>']);

    // Refused: nothing given, unknown placeholders, text past the limit; nothing changes.
    assert.equal((await s.request('PUT', '/v1/me/signature', { token: agent.token, body: {} })).status, 400);
    const unknown = await s.request('PUT', '/v1/me/signature', { token: agent.token, body: { html: '<p>{{member.nick}}</p>' } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /member\.nick/);
    assert.equal((await s.request('PUT', '/v1/me/signature', { token: agent.token, body: { html: `<p>${'x'.repeat(2001)}</p>` } })).status, 400);
    assert.equal((await s.request('GET', '/v1/me/signature', { token: agent.token })).body.html, put.body.html);

    const sent = await s.request('POST', `/v1/conversations/${conversation}/messages`, {
      token: agent.token,
      body: { html: '<p>Your <strong>order</strong> ships today.</p>' },
    });
    assert.equal(sent.status, 201);
    const plain = 'Your order ships today.\n\n-- \nGrace Hopper\nSupport · Help centre (https://acme.example/help)\n\n- Mon–Fri\n\n-- \nSupport team';
    assert.equal(sent.body.body, plain);
    assert.match(
      sent.body.html,
      /<p>Your <strong>order<\/strong> ships today\.<\/p><div class="svc-signature"><p>-- <\/p><p><strong>Grace Hopper<\/strong><br \/>Support · <a [^>]*>Help centre<\/a><\/p><ul><li><p>Mon–Fri<\/p><\/li><\/ul><\/div><div class="svc-signature"><p>-- <\/p><p><em>Support<\/em> team<\/p><\/div>$/,
    );
    const count = sink.messages.length;
    await s.app.jobs.drain();
    const [mail] = (await sink.waitFor(count + 1)).slice(count);
    assert.equal(mail!.parsed.text!.trimEnd(), plain);
    assert.match(String(mail!.parsed.html), /<strong>Grace Hopper<\/strong>/);
    assert.match(String(mail!.parsed.html), /<a [^>]*href="https:\/\/acme\.example\/help"[^>]*>Help centre<\/a>/);

    // A plain body makes the signature plain again; an empty html removes it.
    const back = await s.request('PUT', '/v1/me/signature', { token: agent.token, body: { body: 'Grace' } });
    assert.deepEqual([back.body.body, back.body.html], ['Grace', null]);
    const removed = await s.request('PUT', '/v1/me/signature', { token: agent.token, body: { html: '' } });
    assert.deepEqual([removed.body.body, removed.body.html, removed.body.updated_at], ['', null, null]);
  });
});
