import type { CanonicalRequest } from '@gateway/canonical';

/** What the AI SDK's `injectJsonInstruction` writes before the schema (and what prompts commonly say). */
const SCHEMA_MARKER = /JSON schema:\s*/gi;
/** Lines starting with `{` tried as a schema per text: a prompt full of JSON costs no more than this many parses. */
const MAX_CANDIDATES = 20;

/**
 * The JSON schema a `json_object` request's prompt asks the answer to match. Clients without
 * structured outputs put it in the prompt: the AI SDK's `injectJsonInstruction` (older
 * `generateObject` in JSON mode, and providers that inject it) writes "JSON schema:\n{…}\nYou MUST
 * answer with a JSON object that matches the JSON schema above." into the system message; others
 * paste the schema on a line of its own. The latest message saying so wins, then the system prompt.
 */
export function schemaInPrompt(request: CanonicalRequest): Record<string, unknown> | undefined {
  const texts: string[] = [];
  for (const message of request.messages) {
    if (message.role === 'system') texts.push(message.content);
    else if (message.role === 'user') texts.push(...message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])));
  }
  texts.reverse();
  if (request.system) texts.push(request.system);
  for (const text of texts) {
    const schema = schemaInText(text);
    if (schema) return schema;
  }
  return undefined;
}

function schemaInText(text: string): Record<string, unknown> | undefined {
  let marked: Record<string, unknown> | undefined;
  for (const match of text.matchAll(SCHEMA_MARKER)) {
    const start = match.index + match[0].length;
    if (text[start] !== '{') continue;
    marked = objectAt(text, start) ?? marked;
  }
  if (marked) return marked;
  let candidates = 0;
  for (const line of text.matchAll(/^[ \t]*\{/gm)) {
    if (++candidates > MAX_CANDIDATES) break;
    const value = objectAt(text, line.index + line[0].length - 1);
    if (value && looksLikeSchema(value)) return value;
  }
  return undefined;
}

function looksLikeSchema(value: Record<string, unknown>): boolean {
  return typeof value['$schema'] === 'string' || (value['type'] === 'object' && typeof value['properties'] === 'object');
}

/** The JSON object that starts at `start` (its braces balanced, strings skipped), parsed; undefined if it is not one. */
function objectAt(text: string, start: number): Record<string, unknown> | undefined {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      if (--depth === 0) return parseObject(text.slice(start, index + 1));
    }
  }
  return undefined;
}

function parseObject(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
