#!/usr/bin/env node
// Renders the panel's app icons (ui/panel/public/icons/*.png, used by the web app manifest) from
// the SVGs beside them with the installed chromium. The PNGs are committed; run this again after
// changing logo.svg or maskable.svg:  node scripts/make-icons.mjs
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const DIR = path.resolve('ui/panel/public/icons');
const OUT = [
  ['logo.svg', 'icon-192.png', 192],
  ['logo.svg', 'icon-512.png', 512],
  ['maskable.svg', 'maskable-512.png', 512],
];
const browser = await chromium.launch({
  executablePath: process.env.SVC_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
});
try {
  for (const [svg, png, size] of OUT) {
    const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
    const data = fs.readFileSync(path.join(DIR, svg), 'base64');
    await page.setContent(
      `<html><body style="margin:0;background:transparent"><img src="data:image/svg+xml;base64,${data}" width="${size}" height="${size}" style="display:block"></body></html>`,
    );
    await page.waitForFunction(() => document.images[0]?.complete);
    fs.writeFileSync(path.join(DIR, png), await page.screenshot({ omitBackground: true }));
    await page.close();
    console.log(`${png}: ${size}×${size}`);
  }
} finally {
  await browser.close();
}
