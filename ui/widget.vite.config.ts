// The chat widget's build: the launcher entry (ui/widget/src/main.ts) and the chat panel it imports on
// open, as hashed ES modules in dist/ui/widget/assets. scripts/build-ui.mjs then writes the small
// loader served at /widget.js, which imports the entry by its hashed name.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('./widget'),
  base: './',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('../dist/ui/widget'),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    modulePreload: false,
    manifest: 'manifest.json',
    reportCompressedSize: false,
    sourcemap: false,
    rollupOptions: {
      input: { widget: here('./widget/src/main.ts') },
      // The chat panel imports what it shares with the launcher (client, strings, host) from the entry,
      // which the page has loaded already, rather than from a third chunk both would fetch.
      preserveEntrySignatures: 'allow-extension',
      output: { format: 'es', entryFileNames: 'assets/[name]-[hash].js', chunkFileNames: 'assets/[name]-[hash].js' },
    },
  },
});
