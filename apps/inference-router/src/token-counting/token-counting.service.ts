import { Injectable, Logger } from '@nestjs/common';
import { type MessagesTokenCount, type ResponsesInputTokens, TextFormat, TextFrame, TextGenerationRequest } from '@gateway/contracts';
import type { CanonicalRequest } from '@gateway/canonical';
import { ModelCatalog } from '@gateway/catalog';
import { clientFormat } from '@gateway/client-formats';
import { errorReply, toDomainError } from '../errors/error-reply';
import { servingModel } from '../text-generation/serving-model';
import { countPromptTokens, toUpstreamRoute } from '@gateway/providers';
import { isProviderFailure, UpstreamCaller } from '../providers/upstream-caller';
import { StoredResponsesClient } from '../stored-responses/stored-responses.client';
import { DomainError, ErrorCode } from '@gateway/errors';

const REASONING_EXCLUDE = ':reasoning-exclude';

/**
 * Below the edge's NATS request timeout (5 s by default): an upstream that is slow to count is
 * given up on in time to answer with the local count instead.
 */
export const UPSTREAM_COUNT_TIMEOUT_MS = 3_000;

/** Each format's counting answer: Anthropic's `{input_tokens}`, OpenAI's `response.input_tokens` object. */
const COUNT_BODIES: Partial<Record<TextFormat, (tokens: number) => object>> = {
  messages: (tokens): MessagesTokenCount => ({ input_tokens: tokens }),
  responses: (tokens): ResponsesInputTokens => ({ object: 'response.input_tokens', input_tokens: tokens }),
};

/**
 * Counts a text-generation body's input tokens without generating anything: the model's first
 * route's own counting endpoint when its upstream has one (Anthropic, OpenAI), else, or when that
 * upstream fails or is slow, the gateway's tokenizer (the count the usage event would carry).
 * Nothing is metered: no usage event is published.
 */
@Injectable()
export class TokenCountingService {
  private readonly logger = new Logger(TokenCountingService.name);

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly upstream: UpstreamCaller,
    private readonly store: StoredResponsesClient,
  ) {}

  async count(request: TextGenerationRequest): Promise<TextFrame> {
    const format = clientFormat(request.format);
    try {
      const render = COUNT_BODIES[request.format];
      if (!render) throw new DomainError(ErrorCode.InvalidRequest, `The ${request.format} format has no token counting endpoint`);
      return { kind: 'json', status: 200, body: render(await this.inputTokens(request)) };
    } catch (error) {
      const domain = toDomainError(error);
      if (domain.code === ErrorCode.Internal) this.logger.error(`count ${request.requestId} failed: ${(error as Error)?.stack ?? String(error)}`);
      return errorReply(format, domain, request.requestId);
    }
  }

  private async inputTokens(request: TextGenerationRequest): Promise<number> {
    const rawModel = typeof request.body.model === 'string' ? request.body.model : '';
    const excludeReasoning = rawModel.endsWith(REASONING_EXCLUDE);
    const body = excludeReasoning ? { ...request.body, model: rawModel.slice(0, -REASONING_EXCLUDE.length) } : request.body;
    const format = clientFormat(request.format);
    // A continued conversation counts the stored turns it continues, as the generation would send them.
    const stored = format.storedState ? await this.store.resolve(request, format.storedState, body) : undefined;
    const parsed = format.parse(stored?.body ?? body, { reasoningExcludeSuffix: excludeReasoning, betas: request.betas }).request;
    // Counted as the generation would be sent: without thinking on a model that does not reason.
    const { model, request: canonical } = servingModel(this.catalog, parsed, request.format);
    const first = model.routes[0];
    return (first && (await this.upstreamCount(toUpstreamRoute(first), canonical))) ?? countPromptTokens(canonical);
  }

  /** The upstream's count; undefined when it has none or failed as a provider (a 4xx about the request is the client's). */
  private async upstreamCount(route: ReturnType<typeof toUpstreamRoute>, canonical: CanonicalRequest): Promise<number | undefined> {
    const adapter = this.upstream.adapterFor(route);
    if (!adapter.countInputTokens) return undefined;
    try {
      return await adapter.countInputTokens(route, canonical, AbortSignal.timeout(UPSTREAM_COUNT_TIMEOUT_MS));
    } catch (error) {
      if (!isProviderFailure(error)) throw error;
      this.logger.warn(`${route.adapter} ${route.upstreamModel} could not count tokens (${(error as Error).message}); counted locally`);
      return undefined;
    }
  }
}
