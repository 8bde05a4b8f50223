import type { TextFormat } from '@gateway/contracts';

/** Output cap assumed when neither the request nor the catalog sets one. */
export const FALLBACK_MAX_OUTPUT = 4096;

/**
 * The fields that cap a request's output in each format, in the order the format's parser honours
 * them: the first one present wins (chat: `max_completion_tokens` supersedes the deprecated
 * `max_tokens`, as OpenAI's API does). A field of another format is ignored, as the parser ignores
 * it, so it can neither lower the reservation nor raise the upstream call.
 */
export const OUTPUT_CAP_FIELDS: Record<TextFormat, readonly string[]> = {
  chat: ['max_completion_tokens', 'max_tokens'],
  responses: ['max_output_tokens'],
  messages: ['max_tokens'],
};

/**
 * The output cap a client asked for, by the same rule the format's parser applies: the first
 * present field (`null` counts as absent) of `OUTPUT_CAP_FIELDS`. A present value that is not a
 * positive integer makes the parser refuse the request (400), so nothing is generated; it
 * yields undefined here.
 */
export function requestedOutputCap(format: TextFormat, body: Record<string, unknown>): number | undefined {
  for (const field of OUTPUT_CAP_FIELDS[format]) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    return Number.isInteger(value) && (value as number) > 0 ? (value as number) : undefined;
  }
  return undefined;
}

/**
 * The output tokens a request may cost at most, which the edge reserves and passes to the router as
 * the ceiling of the upstream call: the client's cap, else the model's `max_output_tokens`, else
 * `FALLBACK_MAX_OUTPUT`.
 */
export function reservedOutputCap(format: TextFormat, body: Record<string, unknown>, modelMaxOutput: number | undefined): number {
  return requestedOutputCap(format, body) ?? modelMaxOutput ?? FALLBACK_MAX_OUTPUT;
}
