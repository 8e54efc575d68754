// Screenshots of the chat widget on a host page, closed (the launcher) and open (a conversation with
// a reply, an image and a file from each side), at 1280×800 and 390×844, light and dark, English and
// Turkish (the widget follows the inbox locale), written to bench/widget/shots/.
// Run: npm run build && node dist/bench/widget/screenshots.js
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { chromium, type Page } from 'playwright-core';
import { createChatChannel } from '../../src/channels/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { systemClock } from '../../src/platform/clock.js';
import { seedWorkspace } from '../../test/helpers/fixtures.js';
import { startTestServer } from '../../test/helpers/server.js';

const OUT = path.resolve('bench/widget/shots');
fs.mkdirSync(OUT, { recursive: true });

const s = await startTestServer({ clock: systemClock });
const seed = await seedWorkspace(s.app, { name: 'Acme' });
const keyOf: Record<string, string> = {};
const host = http.createServer((req, res) => {
  const key = keyOf[new URL(req.url ?? '/', 'http://host').pathname.slice(1)];
  if (!key) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Shop</title></head>
<body style="font-family: Georgia, serif; margin: 40px; max-width: 640px"><h1>The shop</h1><p>Hand-made mugs, bowls and plates, shipped in two days.</p>
<script src="${s.url}/widget.js" data-key="${key}" async></script></body></html>`);
});
await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;

const copy = {
  en: { inbox: 'Support', ask: 'Hi, my mug arrived with a crack. Photo attached.', answer: 'Sorry about that! Here is a return label; a new mug ships today.' },
  tr: { inbox: 'Destek', ask: 'Merhaba, kupam çatlak geldi. Fotoğrafı ekledim.', answer: 'Çok üzgünüz! İade etiketi ekte; yeni kupanız bugün kargoda.' },
} as const;
const sessions: Record<string, string> = {};
for (const locale of ['en', 'tr'] as const) {
  const inboxId =
    locale === 'en'
      ? seed.inboxId
      : (await createInbox(s.app, { workspaceId: seed.workspaceId, name: copy.tr.inbox, locale: 'tr', mode: 'async', expectedReplyMinutes: 120 })).id;
  const key = (
    await createChatChannel(s.app, {
      workspaceId: seed.workspaceId,
      inboxId,
      name: 'Chat',
      origins: [origin],
      allowAnonymous: true,
      askEmailOffline: false,
      greeting: locale === 'en' ? 'Hi! How can we help?' : 'Merhaba! Nasıl yardımcı olabiliriz?',
    })
  ).public_key!;
  keyOf[locale] = key;
  sessions[locale] = JSON.stringify(await seedConversation(key, copy[locale]));
}

const browser = await chromium.launch({
  executablePath: process.env.SVC_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
});
try {
  for (const locale of ['en', 'tr'] as const) {
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const [w, h] of [
        [1280, 800],
        [390, 844],
      ] as const) {
        const context = await browser.newContext({ viewport: { width: w, height: h }, colorScheme, locale });
        await context.addInitScript(([k, v]) => localStorage.setItem(k!, v!), [`svc.widget.${keyOf[locale]}`, sessions[locale]]);
        const page = await context.newPage();
        const tag = `${locale}-${colorScheme}-${w}`;
        await page.goto(`${origin}/${locale}`);
        const launcher = page.locator('svc-chat').getByRole('button').first();
        await launcher.waitFor();
        await settle(page);
        await page.screenshot({ path: path.join(OUT, `${tag}-closed.png`) });
        await launcher.click();
        await page.locator('svc-chat').getByRole('dialog').waitFor();
        await page.waitForFunction(
          () =>
            [...(document.querySelector('svc-chat')?.shadowRoot?.querySelectorAll('.thumb img') ?? [])].filter((i) => (i as HTMLImageElement).naturalWidth > 0)
              .length === 2,
        );
        await settle(page);
        await page.screenshot({ path: path.join(OUT, `${tag}-open.png`) });
        await context.close();
      }
    }
  }
} finally {
  await browser.close();
  await s.stop();
  await new Promise((r) => host.close(r));
}
console.log(`screenshots: ${fs.readdirSync(OUT).length} files in ${OUT}`);

async function settle(page: Page) {
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(200);
}

/** A visitor's conversation through the widget API: a question with a photo, the team's answer with an image and a PDF. */
async function seedConversation(key: string, text: { ask: string; answer: string }) {
  const headers = { origin };
  const session = await s.request('POST', '/v1/widget/sessions', { body: { public_key: key, name: 'Ada' }, headers });
  const token = session.body.token as string;
  const started = await s.request('POST', '/v1/widget/conversations', { token, body: { body: text.ask }, headers });
  const conversationId = started.body.conversation.id as string;
  const photo = await s.request('POST', `/v1/widget/conversations/${conversationId}/attachments?filename=mug.png`, {
    token,
    raw: png(160, 110, [200, 120, 80]),
    headers: { ...headers, 'content-type': 'image/png' },
  });
  await s.request('POST', `/v1/widget/conversations/${conversationId}/messages`, { token, body: { body: '', attachment_ids: [photo.body.id] }, headers });
  const ids: string[] = [];
  for (const [name, type, data] of [
    ['return-label.png', 'image/png', png(180, 90, [60, 110, 190])],
    ['invoice-4411.pdf', 'application/pdf', Buffer.from('%PDF-1.4\n%%EOF\n')],
  ] as const) {
    ids.push(
      (
        await s.request('POST', `/v1/conversations/${conversationId}/attachments?filename=${name}`, {
          token: seed.ownerToken,
          raw: data,
          headers: { 'content-type': type },
        })
      ).body.id,
    );
  }
  await s.request('POST', `/v1/conversations/${conversationId}/messages`, { token: seed.ownerToken, body: { body: text.answer, attachment_ids: ids } });
  return { token, expires_at: session.body.expires_at, verified: false, external_id: null, conversation_id: conversationId, cursor: null };
}

/** A small RGB PNG with a diagonal shade, so previews show something. */
function png(width: number, height: number, [r, g, b]: readonly [number, number, number]): Buffer {
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const shade = 0.6 + (0.4 * (x + y)) / (width + height);
      rows.set([r * shade, g * shade, b * shade].map(Math.round), y * (width * 3 + 1) + 1 + x * 3);
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(data: Buffer): number {
  let c = ~0;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
