// The panel's build: one entry (index.html), hashed assets under /assets, no inline scripts (the
// server's CSP has no 'unsafe-inline'), output beside the compiled server in dist/ui/panel.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('./panel'),
  base: '/',
  // public/ holds only the service worker (sw.js), which must keep its name and live at the root.
  publicDir: here('./panel/public'),
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('../dist/ui/panel'),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    sourcemap: false,
  },
});
