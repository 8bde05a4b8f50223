import { Injectable } from '@nestjs/common';
import { type EmbeddingList, EmbeddingsRequest, MediaLimits, MediaReply, MediaRoutes } from '@gateway/contracts';
import type { CatalogModel } from '@gateway/catalog';
import type { EmbeddingRequest } from '@gateway/canonical';
import { countTextsTokens, countTextTokensUpTo } from '@gateway/platform';
import { MediaCalls } from '../media/media-call';
import { UpstreamCaller } from '../providers/upstream-caller';
import { encodeEmbedding } from './embedding-encoding';
import { DomainError, ErrorCode } from '@gateway/errors';

const positiveInt = (value: unknown): number | undefined => (Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : undefined);

/** The model's vector sizes: `metadata.dimensions` (default) and `metadata.max_dimensions` (largest `dimensions`). */
export function modelDimensions(model: CatalogModel): { default?: number; max?: number } {
  const metadata = model.config.metadata ?? {};
  const fallback = positiveInt(metadata['dimensions']);
  return { default: fallback, max: positiveInt(metadata['max_dimensions']) ?? fallback };
}

/**
 * `POST /v1/embeddings`: one vector per input, in input order, each with its `index`; `float` or
 * `base64` (little-endian float32) as asked; `usage.prompt_tokens` from the upstream (or counted).
 */
@Injectable()
export class EmbeddingsService {
  constructor(
    private readonly calls: MediaCalls,
    private readonly upstream: UpstreamCaller,
  ) {}

  embed(request: EmbeddingsRequest): Promise<MediaReply> {
    return this.calls.run(request, MediaRoutes.embeddings, async (outcome) => {
      const { body } = request;
      outcome.model = body.model;
      const model = this.calls.resolveModel(MediaRoutes.embeddings, body.model);
      const inputs = typeof body.input === 'string' ? [body.input] : body.input;
      const counted = this.checkInputs(model, inputs);
      outcome.inputTokens = counted;
      const dimensions = this.dimensionsFor(model, body.dimensions ?? undefined);
      const encoding = body.encoding_format ?? 'float';
      const canonical: EmbeddingRequest = {
        model: model.config.id,
        inputs,
        dimensions,
        dimensionsRequested: body.dimensions !== undefined && body.dimensions !== null,
        encoding,
        user: body.user ?? undefined,
      };
      const signal = new AbortController().signal;
      const { result, route } = await this.upstream.withFallback(model.routes, signal, (adapter, upstreamRoute) => {
        if (!adapter.embed) throw new Error(`the ${upstreamRoute.adapter} adapter does not serve embeddings (catalog model ${model.config.id})`);
        return adapter.embed(upstreamRoute, canonical, signal);
      });
      Object.assign(outcome, { provider: route.adapter, upstreamRoute: route.label, inputTokens: result.inputTokens });
      return {
        kind: 'json',
        status: 200,
        body: {
          object: 'list',
          data: result.vectors.map((vector, index) => ({ object: 'embedding', embedding: encodeEmbedding(vector, encoding), index })),
          model: model.config.id,
          usage: { prompt_tokens: result.inputTokens, total_tokens: result.inputTokens },
        } satisfies EmbeddingList,
      };
    });
  }

  /**
   * Each input within the model's context (`tokens`), all of them within the request limit;
   * returns their tokens. The bounded estimate is an upper bound (it counts bytes past its budget),
   * so an input whose estimate passes a limit is counted exactly, up to that limit, before it is refused.
   */
  private checkInputs(model: CatalogModel, inputs: string[]): number {
    const perInput = model.config.tokens ?? Number.POSITIVE_INFINITY;
    const estimates = countTextsTokens(inputs);
    const counted = inputs.map((input, index) => {
      if (estimates[index] <= perInput) return estimates[index];
      const tokens = countTextTokensUpTo(input, perInput);
      if (tokens === undefined) {
        const name = inputs.length === 1 ? 'input' : `input.${index}`;
        throw new DomainError(ErrorCode.InvalidRequest, `${name} is longer than the ${perInput} tokens ${model.config.id} takes per input`, 'input');
      }
      return tokens;
    });
    const limit = MediaLimits.embeddingTotalTokens;
    const total = counted.reduce((sum, tokens) => sum + tokens, 0);
    if (total <= limit) return total;
    let exactTotal = 0;
    for (const input of inputs) {
      const tokens = countTextTokensUpTo(input, limit - exactTotal);
      if (tokens === undefined) {
        throw new DomainError(ErrorCode.InvalidRequest, `input is longer than ${limit} tokens in all, the most one request may carry`, 'input');
      }
      exactTotal += tokens;
    }
    return exactTotal;
  }

  private dimensionsFor(model: CatalogModel, requested: number | undefined): number | undefined {
    const sizes = modelDimensions(model);
    if (requested !== undefined && sizes.max !== undefined && requested > sizes.max) {
      throw new DomainError(ErrorCode.InvalidRequest, `dimensions must be at most ${sizes.max} for ${model.config.id}`, 'dimensions');
    }
    return requested ?? sizes.default;
  }
}
