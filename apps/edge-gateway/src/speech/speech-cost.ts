import { worstCaseCredits } from '@gateway/billing';
import { ModelCatalog } from '@gateway/catalog';
import { SPEECH_ROUTE, speechCharacters } from '@gateway/contracts';
import { countTextTokens } from '@gateway/platform';
import type { CostEstimate } from '../billing/request-cost';

/**
 * The most a speech request can cost: its input's characters at `pricing.characters`, plus, for an
 * upstream that reports tokens instead, its text's tokens (input and instructions: an upper bound)
 * at `pricing.input` and the model's `max_output_tokens` of audio at `pricing.output`. The
 * characters also count as the request's tokens against the plan's tokens per minute. Null when the
 * model is not in the catalog (the router answers 404; nothing is charged).
 */
export function estimateSpeechCost(catalog: ModelCatalog, body: Record<string, unknown>): CostEstimate | null {
  const model = typeof body.model === 'string' ? catalog.get(body.model) : undefined;
  if (!model) return null;
  const input = typeof body.input === 'string' ? body.input : JSON.stringify(body);
  const instructions = typeof body.instructions === 'string' ? body.instructions : '';
  const characters = speechCharacters(input);
  const inputTokens = countTextTokens(input) + (instructions ? countTextTokens(instructions) : 0);
  const outputTokens = model.config.max_output_tokens ?? 0;
  return {
    model: model.config.id,
    route: SPEECH_ROUTE,
    tokens: Math.max(characters, inputTokens),
    credits: worstCaseCredits(model.config.pricing, { characters, inputTokens, outputTokens }),
  };
}
