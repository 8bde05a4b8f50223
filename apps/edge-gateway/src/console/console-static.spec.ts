import Fastify, { FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_CSP, registerConsole } from './console-static';

const INDEX = '<!doctype html><html><head><script type="module" src="/console/assets/index-abc123.js"></script></head><body></body></html>';

describe('the web console under /console', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'console-static-'));
    mkdirSync(join(dir, 'built', 'assets'), { recursive: true });
    writeFileSync(join(dir, 'built', 'index.html'), INDEX);
    writeFileSync(join(dir, 'built', 'assets', 'index-abc123.js'), 'console.log(1)');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function server(root: string): Promise<FastifyInstance> {
    const fastify = Fastify();
    registerConsole(fastify, root);
    // What the sessions piece registers beside it: a route of its own wins over the app's fallback.
    fastify.get('/console/api/session', async () => ({ session: true }));
    await fastify.ready();
    return fastify;
  }

  it('serves index.html uncached, with the CSP, at /console, /console/ and any app path', async () => {
    const fastify = await server(join(dir, 'built'));
    try {
      for (const url of ['/console', '/console/', '/console/logs?model=x', '/console/keys/deep/path']) {
        const response = await fastify.inject({ url });
        expect({ url, status: response.statusCode, body: response.body }).toEqual({ url, status: 200, body: INDEX });
        expect(response.headers).toMatchObject({
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-cache',
          'content-security-policy': CONSOLE_CSP,
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
        });
      }
    } finally {
      await fastify.close();
    }
  });

  it('serves hashed assets for a year, immutable; a missing file is a 404, not the app', async () => {
    const fastify = await server(join(dir, 'built'));
    try {
      const asset = await fastify.inject({ url: '/console/assets/index-abc123.js' });
      expect(asset.statusCode).toBe(200);
      expect(asset.body).toBe('console.log(1)');
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(asset.headers['content-type']).toMatch(/javascript/);
      expect(asset.headers['content-security-policy']).toBe(CONSOLE_CSP);
      for (const url of ['/console/assets/missing-1.js', '/console/favicon.ico', '/console/assets/../index.html']) {
        expect({ url, status: (await fastify.inject({ url })).statusCode }).toEqual({ url, status: 404 });
      }
    } finally {
      await fastify.close();
    }
  });

  it('leaves /console/api/ to the sessions routes: never a file or the app', async () => {
    const fastify = await server(join(dir, 'built'));
    try {
      expect((await fastify.inject({ url: '/console/api/session' })).json()).toEqual({ session: true });
      const unknown = await fastify.inject({ url: '/console/api/other' });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.headers['content-type']).toMatch(/application\/json/);
    } finally {
      await fastify.close();
    }
  });

  it('answers 503 saying what to do when the console is not built', async () => {
    const fastify = await server(join(dir, 'absent'));
    try {
      for (const url of ['/console', '/console/logs', '/console/assets/index-abc123.js']) {
        const response = await fastify.inject({ url });
        expect({ url, status: response.statusCode }).toEqual({ url, status: 503 });
        expect(response.body).toContain('npm run build');
      }
    } finally {
      await fastify.close();
    }
  });
});
