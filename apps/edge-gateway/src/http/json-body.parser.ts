import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ownsPrototypeCheck } from '../policy/body-policy.decorator';
import { FORBIDDEN_KEY_MESSAGE, inspectJson, mayHoldForbiddenKey, mayHoldUnstorableText, unstorableTextMessage } from './json-inspection';
import { DomainError, ErrorCode } from '@gateway/errors';

const invalidBody = (message: string, param?: string) => new DomainError(ErrorCode.InvalidRequest, message, param);

/**
 * The deepest nesting of arrays and objects a JSON value may have; the parser measures it in one
 * pass without recursion, before anything that recurses (validation, cost estimates,
 * class-transformer) sees the value, so no body can overflow a stack.
 */
export const DEFAULT_JSON_MAX_DEPTH = 64;

/**
 * Above this many characters a body's checks and its parse each run in their own turn of the event
 * loop: each costs tens of milliseconds per megabyte, and a probe or another request arriving
 * meanwhile is answered between them rather than after all of them.
 */
export const LARGE_BODY_CHARS = 1 << 20;

type Done = (error: Error | null, value?: unknown) => void;

/**
 * JSON bodies for every route: an empty body counts as none; invalid JSON, bodies that would reach
 * an object's prototype (`__proto__`, `constructor.prototype`; unless the route declares
 * `@OwnPrototypeCheck()`) and text PostgreSQL cannot store (a NUL, a lone surrogate: see
 * json-inspection.ts) are refused with 400 naming the field.
 */
export function registerJsonBodyParser(fastify: FastifyInstance, bodyLimit: number, maxDepth = DEFAULT_JSON_MAX_DEPTH): void {
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (request: FastifyRequest, body: string | Buffer, done: Done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim().length === 0) return done(null, undefined);
    const next = text.length > LARGE_BODY_CHARS ? (step: () => void) => setImmediate(step) : (step: () => void) => step();
    if (jsonDepthExceeds(text, maxDepth)) {
      return done(invalidBody(`Request body nests arrays and objects more than ${maxDepth} levels deep; the limit is ${maxDepth}`));
    }
    next(() => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return done(invalidBody('Request body is not valid JSON'));
      }
      const options = { prototypeKeys: !ownsPrototypeCheck(request) && mayHoldForbiddenKey(text), text: mayHoldUnstorableText(text) };
      if (!options.text && (!options.prototypeKeys || typeof parsed !== 'object' || parsed === null)) return done(null, parsed);
      next(() => {
        const problem = inspectJson(parsed, options);
        if (!problem) return done(null, parsed);
        if (problem.kind === 'forbidden-key') return done(invalidBody(FORBIDDEN_KEY_MESSAGE));
        done(invalidBody(unstorableTextMessage(problem.param, 'body'), problem.param || undefined));
      });
    });
  });
}

/**
 * Whether a JSON text nests arrays and objects deeper than `maxDepth`: one linear pass, strings
 * skipped from quote to quote with `indexOf` (a quote after an odd run of backslashes is escaped),
 * so long strings cost little. Invalid JSON is left to the parser (an unbalanced text may look deep
 * or shallow here; either way it is a 400).
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return false;
        let backslashes = 0;
        while (text.charCodeAt(i - 1 - backslashes) === 0x5c /* \\ */) backslashes++;
        if (backslashes % 2 === 0) break;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}
