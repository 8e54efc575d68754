// The chat widget on the host page, in a real browser (the scene: test/helpers/widget-site.ts): a
// site that is not among the allowed origins gets no widget, hostile host CSS changes nothing, the
// chat fills a phone's screen, and Turkish follows the inbox's locale; axe finds no serious or
// critical violations.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { assertAccessible, browserSkipReason, screenshot } from '../helpers/browser.js';
import { launcher, startWidgetScene, type WidgetScene } from '../helpers/widget-site.js';

describe('chat widget in a browser: the host page', { skip: browserSkipReason() }, () => {
  let scene: WidgetScene;
  let evil: string;
  let keys: WidgetScene['keys'];
  let visit: WidgetScene['visit'];
  let teamConnections: WidgetScene['teamConnections'];

  before(async () => {
    scene = await startWidgetScene();
    ({ evil, keys, visit, teamConnections } = scene);
  });
  after(() => scene?.stop());

  test('a site that is not among the allowed origins gets no widget', async () => {
    const { context, page, problems } = await visit('elsewhere', { key: keys.plain }, { origin: evil });
    await page.waitForFunction(() => document.readyState === 'complete');
    for (let i = 0; i < 50 && !problems.some((p) => /svc widget: not shown/.test(p)); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      problems.some((p) => /svc widget: not shown .*origin .*is not allowed/.test(p)),
      problems.join('\n'),
    );
    assert.equal(await page.locator('svc-chat').count(), 0);
    await context.close();
  });

  test('hostile host CSS changes nothing; full screen on a phone; Turkish follows the inbox locale', async () => {
    const measure = async (page: Page) => {
      await launcher(page).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      return page.locator('svc-chat').evaluate((hostEl) => {
        const root = hostEl.shadowRoot!;
        const pick = (el: Element) => {
          const cs = getComputedStyle(el);
          const r = el.getBoundingClientRect();
          return {
            x: r.x,
            y: r.y,
            w: r.width,
            h: r.height,
            font: cs.fontFamily,
            color: cs.color,
            bg: cs.backgroundColor,
            display: cs.display,
            padding: cs.padding,
          };
        };
        return {
          launcher: pick(root.querySelector('.launcher')!),
          panel: pick(root.querySelector('.panel')!),
          send: pick(root.querySelector('.send')!),
          bubble: pick(root.querySelector('.bubble')!),
        };
      });
    };
    const plain = await visit('plain-css', { key: keys.plain });
    const hostile = await visit('hostile-css', { key: keys.plain, css: true });
    const a = await measure(plain.page);
    const b = await measure(hostile.page);
    assert.deepEqual(b, a);
    assert.equal(a.panel.w, 380);
    assert.deepEqual(hostile.problems, []);
    await plain.context.close();
    await hostile.context.close();

    await teamConnections(false);
    const phone = await visit('phone', { key: keys.turkish }, { width: 390, height: 844 });
    await phone.page.locator('svc-chat').getByRole('button', { name: 'Sohbeti aç' }).click();
    const dialog = phone.page.getByRole('dialog', { name: 'Destek ile sohbet' });
    await dialog.getByText('Genellikle 2 saat içinde yanıt verir').waitFor();
    const box = await dialog.boundingBox();
    assert.deepEqual(box, { x: 0, y: 0, width: 390, height: 844 });
    await dialog.getByLabel('Bir mesaj yazın').waitFor();
    assert.match((await dialog.getByLabel('Bir mesaj yazın').getAttribute('title')) ?? '', /\*\*kalın\*\*/);
    await assertAccessible(phone.page);
    await screenshot(phone.page, 'widget-phone-tr');
    await phone.context.close();
  });
});
