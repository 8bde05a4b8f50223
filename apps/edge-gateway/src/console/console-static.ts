import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export const CONSOLE_PATH = '/console';
/** Sessions (POST/GET/DELETE /console/api/session) are routes of their own: never a file or the app. */
export const CONSOLE_API_PREFIX = '/console/api/';

/**
 * The console's pages may load only what the edge serves: no inline script or style (styles set from
 * scripts through the CSSOM are not inline markup), no other origin, no framing.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';

function securityHeaders(reply: FastifyReply): void {
  void reply.header('content-security-policy', CONSOLE_CSP);
  void reply.header('x-content-type-options', 'nosniff');
  void reply.header('referrer-policy', 'no-referrer');
  void reply.header('x-frame-options', 'DENY');
}

/** The last path segment has a file extension: a file was asked for, and a missing one is a 404, not the app. */
const looksLikeFile = (url: string): boolean => /\.[A-Za-z0-9]+$/.test(url.split('?')[0].split('/').pop() ?? '');

/**
 * Serves the web console (apps/console, built by Vite into `dir`) under /console: hashed assets
 * cached for a year, index.html for every other path (the app routes in the browser) and never
 * cached, a strict CSP on every answer. Without a build, /console answers a 503 saying so.
 */
export function registerConsole(fastify: FastifyInstance, dir: string): void {
  const root = resolve(dir);
  const indexFile = join(root, 'index.html');
  void fastify.register(async (scope) => {
    scope.addHook('onRequest', async (_request, reply) => securityHeaders(reply));

    const notBuilt = (reply: FastifyReply) =>
      reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(`The web console is not built (${indexFile} is missing): run \`npm run build\`, then restart the edge.\n`);

    const sendIndex = async (_request: FastifyRequest, reply: FastifyReply) => {
      // Read on each request (it is small): a rebuild is served without a restart.
      const html = await readFile(indexFile).catch(() => null);
      if (!html) return notBuilt(reply);
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html);
    };

    const notFound = (request: FastifyRequest, reply: FastifyReply) =>
      reply
        .code(404)
        .type('application/json; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send({ error: { message: `Not found: ${request.url.split('?')[0]}`, type: 'not_found_error', code: 'not_found', param: null } });

    if (existsSync(join(root, 'assets'))) {
      await scope.register(fastifyStatic, {
        root: join(root, 'assets'),
        prefix: `${CONSOLE_PATH}/assets/`,
        // Swagger UI's static plugin decorates the reply already.
        decorateReply: false,
        index: false,
        dotfiles: 'deny',
        cacheControl: false,
        setHeaders: (reply: FastifyReply) => void reply.header('cache-control', IMMUTABLE),
      });
    } else {
      scope.get(`${CONSOLE_PATH}/assets/*`, async (_request, reply) =>
        (await readFile(indexFile).catch(() => null)) ? notFound(_request, reply) : notBuilt(reply),
      );
    }

    scope.get(CONSOLE_PATH, sendIndex);
    scope.get(`${CONSOLE_PATH}/`, sendIndex);
    scope.get(`${CONSOLE_PATH}/*`, async (request, reply) => {
      if (request.url.startsWith(CONSOLE_API_PREFIX) || looksLikeFile(request.url)) return notFound(request, reply);
      return sendIndex(request, reply);
    });
  });
}
