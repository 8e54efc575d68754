// Light formatting in chat (issue 34): the visitor's Markdown-ish text becomes a small sanitized
// html subset (stored with the message, so the panel shows it formatted too); the team's formatted
// replies reach the widget (list and socket) in the same subset, hostile markup removed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createChatChannel } from '../../src/channels/service.js';
import { chatHtml, visitorTextHtml } from '../../src/widget/formatting.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ORIGIN = 'https://shop.example.com';
const LINK = 'rel="noopener nofollow noreferrer" target="_blank"';

describe('chat formatting: what a visitor types', () => {
  test('bold, italic, code, links, lists and quotes; plain text stays plain', () => {
    assert.equal(visitorTextHtml('Hello there,\nsecond line'), null);
    assert.equal(visitorTextHtml('snake_case_name and 2 * 3 * 4 and a*b*c'), null, 'no emphasis inside words or around spaces');
    assert.equal(
      visitorTextHtml('It is **urgent**, *really* _now_: run `rm -rf <x>` see https://shop.example/a_b?x=1&y=2.'),
      `<p>It is <strong>urgent</strong>, <em>really</em> <em>now</em>: run <code>rm -rf &lt;x&gt;</code> see <a href="https://shop.example/a_b?x=1&amp;y=2" ${LINK}>https://shop.example/a_b?x=1&amp;y=2</a>.</p>`,
    );
    assert.equal(visitorTextHtml('go to www.shop.example'), `<p>go to <a href="https://www.shop.example" ${LINK}>www.shop.example</a></p>`);
    assert.equal(
      visitorTextHtml('I tried:\n- **one**\n- two\n\n1. first\n2. second\n> you said\n> this'),
      '<p>I tried:</p><ul><li><strong>one</strong></li><li>two</li></ul><ol><li>first</li><li>second</li></ol><blockquote><p>you said<br />this</p></blockquote>',
    );
    assert.equal(visitorTextHtml('`**not bold**`'), '<p><code>**not bold**</code></p>');
  });

  test('hostile text stays text', () => {
    const cases = [
      '**<script>alert(1)</script>**',
      '*<img src=x onerror=alert(1)>*',
      'javascript:alert(1) **x**',
      '`</code><script>alert(1)</script>`',
      'https://x.example/"onmouseover="alert(1) **y**',
      '- <a href="javascript:alert(1)">z</a>',
    ];
    for (const text of cases) {
      const html = visitorTextHtml(text)!;
      assert.ok(html, text);
      // Only the subset's tags, and no attribute but a link's http(s) address, rel and target.
      assert.doesNotMatch(html, /<(?!\/?(p|br|strong|em|a|ul|ol|li|blockquote|code)[\s>/])/i, `${text} → ${html}`);
      for (const tag of html.match(/<a [^>]*>/g) ?? []) assert.match(tag, new RegExp(`^<a href="https://[^"]*" ${LINK}>$`), tag);
    }
    assert.equal(visitorTextHtml('javascript:alert(1) **x**'), '<p>javascript:alert(1) <strong>x</strong></p>');
  });

  test('the chat subset of the team’s html: no scripts, styles, handlers, images or javascript: links', () => {
    assert.equal(
      chatHtml(
        '<p style="color:red" onclick="x()">Hi <strong>A</strong> <a href="javascript:alert(1)">bad</a> <a href="https://ok.example" target="_self">ok</a><img src="https://t.example/p.png"></p><script>alert(1)</script><style>p{}</style><table><tr><td>cell</td></tr></table>',
      ),
      `<p>Hi <strong>A</strong> <a ${LINK}>bad</a> <a href="https://ok.example" ${LINK}>ok</a></p>cell`,
    );
    assert.equal(chatHtml(null), null);
    assert.equal(chatHtml('<img src="https://t.example/p.png">'), null);
  });
});

describe('chat formatting over the API', () => {
  let s: TestServer;
  let seed: Seed;
  let publicKey: string;

  before(async () => {
    s = await startTestServer();
    seed = await seedWorkspace(s.app);
    publicKey = (
      await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Widget', origins: [ORIGIN], allowAnonymous: true })
    ).public_key!;
  });
  after(() => s.stop());

  const visitor = (method: string, path: string, token?: string, body?: unknown) => s.request(method, path, { token, body, headers: { origin: ORIGIN } });

  test('the visitor’s formatting is stored as html for the team; the team’s reply reaches the widget formatted and safe', async () => {
    const session = await visitor('POST', '/v1/widget/sessions', undefined, { public_key: publicKey });
    const token = session.body.token as string;
    const started = await visitor('POST', '/v1/widget/conversations', token, { body: 'Order **42** is _late_' });
    assert.equal(started.status, 201);
    assert.equal(started.body.message.body, 'Order **42** is _late_', 'the text as typed');
    assert.equal(started.body.message.html, '<p>Order <strong>42</strong> is <em>late</em></p>');
    const conversationId = started.body.conversation.id as string;
    const plain = await visitor('POST', `/v1/widget/conversations/${conversationId}/messages`, token, { body: 'just text <b>' });
    assert.equal(plain.body.html, null);
    // The team sees the visitor's formatting (html on the message, served in the sandboxed page).
    const teamView = await s.request('GET', `/v1/conversations/${conversationId}/messages`, { token: seed.ownerToken });
    const first = teamView.body.data.find((m: { id: string }) => m.id === started.body.message.id);
    assert.equal(first.html, '<p>Order <strong>42</strong> is <em>late</em></p>');

    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/widget/realtime?token=${token}`, { headers: { origin: ORIGIN } });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once('open', r));
    await waitFor(() => frames.some((f) => f.type === 'hello'));
    const reply = await s.request('POST', `/v1/conversations/${conversationId}/messages`, {
      token: seed.ownerToken,
      body: {
        html: '<p>We are <strong>on it</strong>: <a href="https://track.example/42">track</a> <a href="javascript:alert(1)">x</a></p><ul><li><p>step</p></li></ul><blockquote><p>q</p></blockquote><p><code>c</code><img src="https://t.example/a.png" onerror="alert(1)"></p>',
      },
    });
    assert.equal(reply.status, 201);
    const expected = `<p>We are <strong>on it</strong>: <a href="https://track.example/42" ${LINK}>track</a> <a ${LINK}>x</a></p><ul><li><p>step</p></li></ul><blockquote><p>q</p></blockquote><p><code>c</code></p>`;
    await waitFor(() => frames.some((f) => f.type === 'message' && f.message.id === reply.body.id));
    assert.equal(frames.find((f) => f.type === 'message' && f.message.id === reply.body.id).message.html, expected);
    ws.close();
    const listed = await visitor('GET', `/v1/widget/conversations/${conversationId}/messages`, token);
    assert.equal(listed.status, 200);
    const data = (listed.body.data ?? listed.body) as { id: string; html: string | null }[];
    assert.equal(data.find((m) => m.id === reply.body.id)!.html, expected);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
