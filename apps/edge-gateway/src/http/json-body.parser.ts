import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as secureJson from 'secure-json-parse';
import { ErrorCode } from '@gateway/contracts';
import { DomainError } from '@gateway/platform';
import { ownsPrototypeCheck } from '../policy/body-policy.decorator';

const invalidBody = (message: string) => new DomainError(ErrorCode.InvalidRequest, message);

/**
 * The deepest nesting of arrays and objects a JSON value may have; the parser measures it in one
 * pass without recursion, before anything that recurses (the prototype scan, validation, cost
 * estimates, class-transformer) sees the value, so no body can overflow a stack.
 */
export const DEFAULT_JSON_MAX_DEPTH = 64;

export const FORBIDDEN_KEY_MESSAGE = 'Request body contains a forbidden key (__proto__, or constructor with prototype)';

/**
 * JSON bodies for every route: an empty body counts as none; invalid JSON and bodies that would
 * reach an object's prototype (`__proto__`, `constructor.prototype`) are refused with 400, unless
 * the route declares `@OwnPrototypeCheck()`.
 */
export function registerJsonBodyParser(fastify: FastifyInstance, bodyLimit: number, maxDepth = DEFAULT_JSON_MAX_DEPTH): void {
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit },
    (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim().length === 0) return done(null, undefined);
      if (jsonDepthExceeds(text, maxDepth)) {
        return done(invalidBody(`Request body nests arrays and objects more than ${maxDepth} levels deep; the limit is ${maxDepth}`));
      }
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

/**
 * Whether a JSON text nests arrays and objects deeper than `maxDepth`: one linear pass, brackets
 * inside strings skipped. Invalid JSON is left to the parser (an unbalanced text may look deep or
 * shallow here; either way it is a 400).
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \\ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}
