/**
 * The decision request schema as a validator: one ajv compile, and its problems as the spec's
 * decision errors (`invalid_body`, `missing_required_parameter`, `invalid_type`, `invalid_value`)
 * in the words the schema's `x-decision-error` gives.
 *
 * Of several problems, the one reported is the first a reader of the body meets: `model`, `state`,
 * `questions` in that order, each question in the order sent (its id before its content; `type`,
 * `instructions`, `criteria`), a value's own problem (type, then keys, then size) before its
 * items'. ajv collects them all (`allErrors`) and they are ranked so.
 */
import Ajv, { type ErrorObject } from 'ajv';
import type { Static, TSchema } from 'typebox';
import { DECISION_ERROR } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';

type Json = Record<string, unknown>;

const ajv = new Ajv({ allErrors: true, verbose: true, strict: false });
// A score's criteria as an object: exactly the keys "0", "1", … in order, with no gaps.
ajv.addKeyword({
  keyword: 'x-level-keys',
  type: 'object',
  schemaType: 'boolean',
  validate: (_: boolean, data: object) => Object.keys(data).every((key, index) => key === String(index)),
});

/** Fields read in this order, by their depth in the body (0: the body, 2: a question). */
const FIELD_ORDER: Record<number, string[]> = { 0: ['model', 'state', 'questions'], 2: ['type', 'instructions', 'criteria'] };
const NOUL_ORDER = ['true', 'false'];
const KEYWORD_ORDER = ['type', 'x-level-keys'];

export function compileDecisionValidator<T extends TSchema>(schema: T): (body: unknown) => Static<T> {
  const validate = ajv.compile(schema as object);
  return (body) => {
    if (validate(body)) return body as Static<T>;
    const errors = (validate.errors as ErrorObject[]).filter((error) => error.keyword !== 'if');
    const ranked = errors.map((error) => ({ error, rank: rankOf(error, body) })).sort((a, b) => compareRanks(a.rank, b.rank));
    throw toDecisionError(ranked[0].error);
  };
}

/** Where in the body a problem lies, as positions in reading order, then how early its keyword is checked. */
function rankOf(error: ErrorObject, body: unknown): number[] {
  const segments = pathOf(error);
  const positions: number[] = [];
  let node: unknown = body;
  let question: unknown;
  segments.forEach((segment, depth) => {
    positions.push(positionIn(node, segment, depth, question));
    node = (node as Json | undefined)?.[segment];
    if (depth === 1) question = node;
  });
  if (error.propertyName !== undefined) positions.push(-1);
  const keyword = KEYWORD_ORDER.indexOf(error.keyword);
  return [...positions, keyword === -1 ? KEYWORD_ORDER.length : keyword];
}

function positionIn(node: unknown, segment: string, depth: number, question: unknown): number {
  const fixed = depth === 3 && (question as Json | undefined)?.type === 'noul' ? NOUL_ORDER : FIELD_ORDER[depth];
  if (fixed) return fixed.includes(segment) ? fixed.indexOf(segment) : fixed.length;
  if (Array.isArray(node)) return Number(segment);
  return Object.keys(node as object).indexOf(segment);
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** The path of the value at fault: a missing field's or a refused key's included. */
function pathOf(error: ErrorObject): string[] {
  const segments = segmentsOf(error.instancePath);
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  if (error.propertyName !== undefined) segments.push(error.propertyName);
  return segments;
}

const segmentsOf = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));

function toDecisionError(error: ErrorObject): DomainError {
  const schema = (error.parentSchema ?? {}) as Json;
  const declared = (schema[DECISION_ERROR] as Record<string, [ErrorCode, string, string?]> | undefined)?.[error.keyword];
  const at = segmentsOf(error.instancePath).join('.');
  const param = pathOf(error).join('.');
  if (!declared) return new DomainError(ErrorCode.InvalidValue, `${param || 'request body'} ${error.message ?? 'is invalid'}`, param || undefined);
  const [code, message, paramTemplate = '{param}'] = declared;
  const data = error.data;
  const count = Array.isArray(data) ? data.length : typeof data === 'object' && data !== null ? Object.keys(data).length : 0;
  const fill = (text: string) => text.replace('{param}', param).replace('{at}', at).replace('{count}', String(count));
  const where = fill(paramTemplate);
  return new DomainError(code, fill(message), where === '' ? undefined : where);
}
