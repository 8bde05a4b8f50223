import { isStorableText } from '@gateway/contracts';

/**
 * What the edge checks in a request's values before anything reads them, in one iterative pass
 * (no body can overflow a stack): keys that would reach an object's prototype, and text that
 * PostgreSQL cannot store — a NUL (U+0000) or a lone UTF-16 surrogate (`"\ud800"`), which a usage
 * event, a key record, a stored response or a log line would carry on and fail to write.
 */

export const FORBIDDEN_KEY_MESSAGE = 'Request body contains a forbidden key (__proto__, or constructor with prototype)';

/**
 * Whether a JSON text may hold a NUL or a lone surrogate: only a `\u` escape can write either (a
 * raw NUL is invalid JSON, a raw surrogate invalid UTF-8), so a text without `\u0000` or
 * `\uD800`–`\uDFFF` (any case) holds neither and its parsed value need not be walked for them.
 * Valid surrogate pairs (`"\ud83d\ude00"`) match too: the walk tells them apart.
 */
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/;

export const mayHoldUnstorableText = (jsonText: string): boolean => UNSTORABLE_ESCAPE.test(jsonText);

/**
 * Whether a JSON text may hold a key that reaches an object's prototype: it names `__proto__` or
 * `constructor`, or has a `\u` escape (which could spell either). Most bodies do neither, and their
 * parsed value is not walked at all.
 */
export const mayHoldForbiddenKey = (jsonText: string): boolean =>
  jsonText.includes('__proto__') || jsonText.includes('constructor') || jsonText.includes('\\u');

export { isStorableText };

export interface JsonProblem {
  kind: 'forbidden-key' | 'unstorable-text';
  /** Dotted path of the offending field (`messages.0.content`); empty for the value itself. */
  param: string;
}

export interface InspectOptions {
  prototypeKeys: boolean;
  text: boolean;
}

const hasOwn = (value: object, key: string): boolean => Object.prototype.hasOwnProperty.call(value, key);

/** An array or object being walked: its keys (null for an array) and the position reached. */
interface Frame {
  container: Record<string, unknown> | unknown[];
  keys: string[] | null;
  index: number;
}

/** The dotted path of the value the innermost frame points at. */
const pathOf = (frames: Frame[]): string => frames.map((frame) => (frame.keys ? frame.keys[frame.index] : String(frame.index))).join('.');
const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/**
 * The first problem in a parsed JSON value (or a query or params object), depth first, without
 * recursion and without building a path until there is a problem to name. Forbidden keys are those
 * secure-json-parse refuses: an own `__proto__`, or an own `constructor` object with an own
 * `prototype`.
 */
export function inspectJson(root: unknown, options: InspectOptions): JsonProblem | undefined {
  if (typeof root === 'string') return options.text && !isStorableText(root) ? { kind: 'unstorable-text', param: '' } : undefined;
  if (typeof root !== 'object' || root === null) return undefined;
  const frames: Frame[] = [];
  const enter = (container: object): JsonProblem | undefined => {
    if (Array.isArray(container)) {
      frames.push({ container, keys: null, index: -1 });
      return undefined;
    }
    if (options.prototypeKeys) {
      const constructor = (container as { constructor?: unknown }).constructor;
      if (
        hasOwn(container, '__proto__') ||
        (hasOwn(container, 'constructor') && typeof constructor === 'object' && constructor !== null && hasOwn(constructor, 'prototype'))
      ) {
        return { kind: 'forbidden-key', param: pathOf(frames) };
      }
    }
    const keys = Object.keys(container);
    if (options.text) {
      const bad = keys.find((key) => !isStorableText(key));
      if (bad !== undefined) return { kind: 'unstorable-text', param: join(pathOf(frames), printable(bad)) };
    }
    frames.push({ container: container as Record<string, unknown>, keys, index: -1 });
    return undefined;
  };
  const rootProblem = enter(root);
  if (rootProblem) return rootProblem;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    frame.index++;
    if (frame.index >= (frame.keys ?? (frame.container as unknown[])).length) {
      frames.pop();
      continue;
    }
    const value = frame.keys ? (frame.container as Record<string, unknown>)[frame.keys[frame.index]] : (frame.container as unknown[])[frame.index];
    if (typeof value === 'string') {
      if (options.text && !isStorableText(value)) return { kind: 'unstorable-text', param: pathOf(frames) };
    } else if (typeof value === 'object' && value !== null) {
      const problem = enter(value);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** NULs and lone surrogates: the characters a printable key shows as escapes. */
// eslint-disable-next-line no-control-regex
const UNSTORABLE_CHARS = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A key as it can be shown: NULs and lone surrogates written as their JSON escapes. */
function printable(key: string): string {
  return key.replace(UNSTORABLE_CHARS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const WHERE = { body: 'the request body', path: 'a path parameter', query: 'a query parameter' } as const;

/** The message of an unstorable-text refusal, naming the field and where it was sent. */
export function unstorableTextMessage(param: string, where: keyof typeof WHERE): string {
  const field = param ? `${param} (${WHERE[where]})` : `The${WHERE[where].slice(3)}`;
  return `${field} contains a NUL character (\\u0000) or an unpaired UTF-16 surrogate (\\ud800-\\udfff), which the gateway cannot store; remove it`;
}
