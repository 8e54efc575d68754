// Screenshots of the panel's main pages at 1280×800 and 390×844, light and dark, English and
// Turkish, written to bench/panel/shots/. Run: npm run build && node dist/bench/panel/screenshots.js
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { addPerson, seedWorkspace } from '../../test/helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../../test/helpers/mail.js';
import { startTestServer } from '../../test/helpers/server.js';
import { prepareMigrationShots } from './migration-shots.js';

const OUT = path.resolve('bench/panel/shots');
fs.mkdirSync(OUT, { recursive: true });

const s = await startTestServer({
  env: { SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_FORWARDING_DOMAIN: 'in.example.com' },
  clock: systemClock,
});
const seed = await seedWorkspace(s.app, { name: 'Acme' });
const channel = await seedEmailChannel(s.app, seed);
const people = [
  [
    'Ada Lovelace',
    'ada@example.com',
    'Invoice 4411 was charged twice',
    'Hello, my card was charged twice for invoice 4411 this morning. Could you refund one of them?\n\nThanks,\nAda',
  ],
  ['Grace Hopper', 'grace@example.com', 'Cannot sign in after password reset', 'Since resetting my password yesterday the app says my account is locked.'],
  ['Linus Example', 'linus@example.com', 'Feature request: CSV export', 'Would it be possible to export all orders as CSV?'],
  ['Ayşe Yılmaz', 'ayse@example.com', 'Sipariş durumu', 'Merhaba, 1203 numaralı siparişim ne zaman kargoya verilecek?'],
] as const;
let first = '';
for (const [name, email, subject, body] of people) {
  const r = await deliverMail(s, channel.address!, { From: `${name} <${email}>`, Subject: subject }, body);
  first = r.conversation_id;
}
await s.request('POST', `/v1/conversations/${first}/messages`, { token: seed.ownerToken, body: { kind: 'note', body: 'Checking the carrier for this one.' } });
await s.request('POST', `/v1/conversations/${first}/messages`, { token: seed.ownerToken, body: { body: 'Merhaba Ayşe, siparişiniz bugün kargoya verildi.' } });
const contactId = (await s.request('GET', `/v1/conversations/${first}`, { token: seed.apiKey })).body.contact_id;
await s.request('PATCH', `/v1/contacts/${contactId}`, { token: seed.apiKey, body: { attributes: { plan: 'Pro', seats: 12, vip: true } } });
await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { name: 'Grace Hopper' } });
// A teammate with the same conversation open, writing a reply: the collision warning in the header.
const teammate = await addPerson(s.app, seed.workspaceId, 'agent');
await s.request('PATCH', '/v1/me', { token: teammate.token, body: { name: 'Mehmet' } });

const ownerEmail = (await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
const migrations = await prepareMigrationShots(s, seed, ownerEmail);

const browser = await chromium.launch({
  executablePath: process.env.SVC_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
});
try {
  for (const locale of ['en', 'tr'] as const) {
    await s.app.db.updateTable('people').set({ locale }).where('id', '=', seed.ownerId).execute();
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const [w, h] of [
        [1280, 800],
        [390, 844],
      ] as const) {
        const context = await browser.newContext({ viewport: { width: w, height: h }, colorScheme, locale });
        await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
        const page = await context.newPage();
        const tag = `${locale}-${colorScheme}-${w}`;
        await shot(page, `${s.url}/conversations`, `${tag}-list.png`);
        await s.request('POST', `/v1/conversations/${first}/viewing`, { token: teammate.token });
        await shot(page, `${s.url}/conversations/${first}`, `${tag}-conversation.png`, async () => {
          await s.request('POST', `/v1/conversations/${first}/typing`, { token: teammate.token });
          await page.locator('.presence-line:not(.empty)').waitFor();
        });
        await shot(page, `${s.url}/settings/account`, `${tag}-settings-account.png`);
        await shot(page, `${s.url}/settings/inboxes/${seed.inboxId}`, `${tag}-settings-inbox.png`);
        await shot(page, `${s.url}/settings/api-keys`, `${tag}-settings-keys.png`);
        for (const [url, name] of migrations.pages) await shot(page, `${s.url}${url}`, `${tag}-${name}.png`);
        await context.close();
        const anon = await browser.newContext({ viewport: { width: w, height: h }, colorScheme, locale });
        await shot(await anon.newPage(), `${s.url}/sign-in`, `${tag}-sign-in.png`);
        await anon.close();
      }
    }
  }
} finally {
  await browser.close();
  await s.stop();
  await migrations.stop();
}
console.log(`screenshots: ${fs.readdirSync(OUT).length} files in ${OUT}`);

async function shot(page: Page, url: string, name: string, ready?: () => Promise<void>) {
  await page.goto(url);
  await page.waitForLoadState('networkidle');
  await ready?.();
  await page.waitForTimeout(150);
  await page.screenshot({ path: path.join(OUT, name) });
}
