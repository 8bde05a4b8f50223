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
    chunkSizeWarningLimit: 500,
    rolldownOptions: {
      output: {
        // Each page is a chunk of its own (router.tsx loads them on demand). Third-party code is kept
        // apart from ours, so that a change to the app leaves its cached chunks valid: what the first
        // page needs (React, TanStack Router and Query) in `vendor`; Recharts and what it brings
        // (d3, redux) in `recharts`, loaded with the overview only; luxon, shared by several pages.
        codeSplitting: {
          groups: [
            { name: 'vendor', test: /[\\/]node_modules[\\/]/, tags: ['$initial'], priority: 3 },
            { name: 'recharts', test: /[\\/]node_modules[\\/]recharts[\\/]/, priority: 2 },
            { name: 'luxon', test: /[\\/]node_modules[\\/]luxon[\\/]/, priority: 1 },
          ],
        },
      },
    },
  },
  server: {
    // `npx vite apps/console` against a running edge: the API and session routes are proxied.
    proxy: { '/v1': 'http://localhost:8080', '/console/api': 'http://localhost:8080' },
  },
});
