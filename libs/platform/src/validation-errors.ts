import { ValidationError } from 'class-validator';

export interface FieldProblem {
  /** Dotted path of the offending field, e.g. `ip_whitelist.1` or `questions.q1.criteria`. */
  param: string;
  message: string;
}

/** The first problem of a class-validator result, with its full field path. */
export function firstFieldProblem(errors: ValidationError[], parent = ''): FieldProblem | undefined {
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const messages = Object.values(error.constraints ?? {});
    if (messages.length > 0) {
      const [message] = messages;
      return { param: path, message: parent ? `${parent}.${message}` : message };
    }
    const nested = firstFieldProblem(error.children ?? [], path);
    if (nested) return nested;
  }
  return undefined;
}
