import { UpstreamError } from './provider-adapter';

/**
 * Statuses that mean "this server has no counting endpoint" (OpenAI-compatible servers such as
 * vLLM or Ollama, older Anthropic-compatible proxies): the router then counts with its tokenizer.
 */
const NOT_SERVED = new Set([404, 405, 501]);

/** Runs an upstream count; undefined when the upstream does not serve counting. */
export async function unlessNotServed(count: () => Promise<number>): Promise<number | undefined> {
  try {
    return await count();
  } catch (error) {
    if (error instanceof UpstreamError && NOT_SERVED.has(error.status)) return undefined;
    throw error;
  }
}

/** The `input_tokens` of a counting endpoint's answer; anything else is a malformed answer. */
export function inputTokensOf(body: unknown): number {
  const tokens = (body as { input_tokens?: unknown } | null)?.input_tokens;
  if (typeof tokens !== 'number' || !Number.isSafeInteger(tokens) || tokens < 0) {
    throw new UpstreamError(502, 'upstream returned a token count without input_tokens', true, body);
  }
  return tokens;
}
