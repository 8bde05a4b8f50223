import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as secureJson from 'secure-json-parse';
import { ErrorCode } from '@gateway/contracts';
import { DomainError } from '@gateway/platform';
import { ownsPrototypeCheck } from '../policy/body-policy.decorator';

const invalidBody = (message: string) => new DomainError(ErrorCode.InvalidRequest, message);

export const FORBIDDEN_KEY_MESSAGE = 'Request body contains a forbidden key (__proto__, or constructor with prototype)';

/**
 * JSON bodies for every route: an empty body counts as none; invalid JSON and bodies that would
 * reach an object's prototype (`__proto__`, `constructor.prototype`) are refused with 400, unless
 * the route declares `@OwnPrototypeCheck()`.
 */
export function registerJsonBodyParser(fastify: FastifyInstance, bodyLimit: number): void {
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit },
    (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim().length === 0) return done(null, undefined);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return done(invalidBody('Request body is not valid JSON'));
      }
      if (typeof parsed === 'object' && parsed !== null && !ownsPrototypeCheck(request)) {
        try {
          secureJson.scan(parsed, { protoAction: 'error', constructorAction: 'error' });
        } catch {
          return done(invalidBody(FORBIDDEN_KEY_MESSAGE));
        }
      }
      done(null, parsed);
    },
  );
}
