import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The web console, served by the edge under /console (apps/edge-gateway/src/console). Everything it
 * loads comes from its own origin: no inline script or style, so the edge's CSP can forbid both.
 */
export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: resolve(here, '../../dist/apps/console'),
    emptyOutDir: true,
    assetsDir: 'assets',
    // The polyfill would be bundled anyway; modern browsers do not need it.
    modulePreload: { polyfill: false },
    // Never inline assets as data: URLs into scripts or styles; the CSP allows data: images only.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1500,
  },
  server: {
    // `npx vite apps/console` against a running edge: the API and session routes are proxied.
    proxy: { '/v1': 'http://localhost:8080', '/console/api': 'http://localhost:8080' },
  },
});
