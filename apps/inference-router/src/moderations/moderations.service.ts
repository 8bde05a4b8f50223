import { Injectable } from '@nestjs/common';
import { MediaReply, MediaRoutes, type ModerationResult, ModerationsRequest } from '@gateway/contracts';
import { randomUUID } from 'node:crypto';
import type { ModerationRequest } from '@gateway/canonical';
import { MediaCalls } from '../media/media-call';
import { countTextsTokens } from '@gateway/platform';
import { UpstreamCaller } from '../providers/upstream-caller';

/**
 * `POST /v1/moderations`: one result per input, in input order, with all 11 categories. Billed as
 * input tokens (gpt-tokenizer over the inputs: moderation APIs report no usage).
 */
@Injectable()
export class ModerationsService {
  constructor(
    private readonly calls: MediaCalls,
    private readonly upstream: UpstreamCaller,
  ) {}

  moderate(request: ModerationsRequest): Promise<MediaReply> {
    return this.calls.run(request, MediaRoutes.moderations, async (outcome) => {
      const { body } = request;
      outcome.model = body.model ?? '';
      const model = this.calls.resolveModel(MediaRoutes.moderations, body.model);
      outcome.model = model.config.id;
      const inputs = typeof body.input === 'string' ? [body.input] : body.input;
      outcome.inputTokens = countTextsTokens(inputs).reduce((sum, tokens) => sum + tokens, 0);
      const canonical: ModerationRequest = { model: model.config.id, inputs };
      const signal = new AbortController().signal;
      const { result, route } = await this.upstream.withFallback(model.routes, signal, (adapter, upstreamRoute) => {
        if (!adapter.moderate) throw new Error(`the ${upstreamRoute.adapter} adapter does not serve moderations (catalog model ${model.config.id})`);
        return adapter.moderate(upstreamRoute, canonical, signal);
      });
      Object.assign(outcome, { provider: route.adapter, upstreamRoute: route.label });
      return {
        kind: 'json',
        status: 200,
        body: { id: result.id ?? `modr-${randomUUID()}`, model: model.config.id, results: result.results } satisfies ModerationResult,
      };
    });
  }
}
