import { ValidationError } from 'class-validator';

export interface FieldProblem {
  /** Dotted path of the offending field, e.g. `ip_whitelist.1` or `questions.q1.criteria`. */
  param: string;
  message: string;
}

/**
 * class-validator runs every rule of a field and reports them in the order the decorators were
 * applied (bottom-up), so a value of the wrong type also fails its length or range rule, which
 * would be reported first: `[null]` as "must be shorter than or equal to 256 characters". The type
 * rules are named first; the others keep their order.
 */
const TYPE_RULES = ['isDefined', 'isString', 'isNumber', 'isInt', 'isBoolean', 'isArray', 'isObject'];

function firstMessage(constraints: Record<string, string>): string | undefined {
  const rule = TYPE_RULES.find((name) => constraints[name] !== undefined) ?? Object.keys(constraints)[0];
  return rule === undefined ? undefined : constraints[rule];
}

/** A field that is absent, as opposed to one sent with a wrong value. */
const isMissing = (error: ValidationError): boolean => 'value' in error && error.value === undefined;

/** The first problem of a class-validator result, with its full field path. */
export function firstFieldProblem(errors: ValidationError[], parent = ''): FieldProblem | undefined {
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const message = firstMessage(error.constraints ?? {});
    if (message !== undefined) {
      if (isMissing(error)) return { param: path, message: `${path} is required` };
      return { param: path, message: parent ? `${parent}.${message}` : message };
    }
    const nested = firstFieldProblem(error.children ?? [], path);
    if (nested) return nested;
  }
  return undefined;
}
