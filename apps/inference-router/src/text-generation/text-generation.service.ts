import { Injectable, Logger } from '@nestjs/common';
import { TEXT_ROUTES, TextFrame, TextGenerationRequest, UsageStatus } from '@gateway/contracts';
import { Observable, Subscriber } from 'rxjs';
import { CanonicalStreamEvent, Usage } from '../canonical/canonical.types';
import { ModelCatalog } from '@gateway/catalog';
import { errorBody } from '../client-formats/error-bodies';
import { classifyDecisionModel, DECISION_ENDPOINT, decisionVendor } from '../decisions/decision-model';
import { parseClientRequest, RequestValidationError } from '../client-formats/parse-request';
import { renderResponse } from '../client-formats/render-response';
import { createStreamEncoder } from '../client-formats/stream-encoders';
import { clientMessageFor, clientStatusFor, UpstreamError } from '../providers/provider-adapter';
import { countPromptTokens, countTokens } from '../providers/token-count';
import { UsagePublisher } from '../usage/usage.publisher';
import { InflightRequests } from './inflight-requests';
import { UpstreamCaller } from './upstream-caller';

const REASONING_EXCLUDE = ':reasoning-exclude';

interface Outcome {
  status: UsageStatus;
  model: string;
  inputTokens: number;
  outputTokens: number;
  provider?: string;
}

class ClientError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

/**
 * One text-generation call, whatever the client's format: parse, resolve the model, call its
 * routes (with fallback), render in the client's format — whole or as a stream — and publish
 * exactly one usage event, also when the call fails or the client goes away.
 */
@Injectable()
export class TextGenerationService {
  private readonly logger = new Logger(TextGenerationService.name);

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly upstream: UpstreamCaller,
    private readonly usage: UsagePublisher,
    private readonly inflight: InflightRequests,
  ) {}

  generate(request: TextGenerationRequest): Observable<TextFrame> {
    return new Observable<TextFrame>((subscriber) => {
      const abort = this.inflight.register(request.requestId);
      const outcome: Outcome = { status: 'error', model: String(request.body.model ?? ''), inputTokens: 0, outputTokens: 0 };
      void this.run(request, subscriber, abort.signal, outcome)
        .catch((error: unknown) => {
          // A client that went away is not a failure, whatever the upstream call threw on abort.
          if (!abort.signal.aborted) this.fail(request, subscriber, error, outcome);
        })
        .finally(() => {
          this.inflight.release(request.requestId);
          if (abort.signal.aborted) outcome.status = 'cancelled';
          void this.record(request, outcome);
          subscriber.complete();
        });
      return () => abort.abort();
    });
  }

  private async run(request: TextGenerationRequest, out: Subscriber<TextFrame>, signal: AbortSignal, outcome: Outcome): Promise<void> {
    const rawModel = typeof request.body.model === 'string' ? request.body.model : '';
    const excludeReasoning = rawModel.endsWith(REASONING_EXCLUDE);
    const modelId = excludeReasoning ? rawModel.slice(0, -REASONING_EXCLUDE.length) : rawModel;
    // The decision model writes no chat text (spec): point its callers at the decision endpoint,
    // version-pinned ids of it included.
    if (classifyDecisionModel(modelId, decisionVendor(this.catalog)) !== 'other') {
      throw new ClientError(400, `The model '${modelId}' answers structured decisions only: use POST ${DECISION_ENDPOINT}`, 'model');
    }
    const body = excludeReasoning ? { ...request.body, model: modelId } : request.body;
    const parsed = parseClientRequest(request.format, body, { reasoningExcludeSuffix: excludeReasoning });
    const canonical = parsed.request;
    outcome.model = canonical.model;
    const model = this.catalog.get(canonical.model);
    if (!model) throw new ClientError(404, `The model '${canonical.model}' does not exist or is not available to you`, 'model');
    const route = TEXT_ROUTES[request.format];
    if (model.config.endpoints.length > 0 && !model.config.endpoints.includes(route)) {
      throw new ClientError(400, `The model '${canonical.model}' does not serve ${route}`, 'model');
    }
    outcome.inputTokens = countPromptTokens(canonical);
    const context = {
      request: canonical,
      excludeReasoning: canonical.reasoning?.exclude ?? false,
      reasoningContentCompat: parsed.reasoningContentCompat,
      metadata: parsed.metadata,
    };

    if (!canonical.stream) {
      const { result, route: served } = await this.upstream.withFallback(
        model.routes,
        signal,
        (adapter, upstreamRoute) => adapter.complete(upstreamRoute, canonical, signal),
        canonical.model,
      );
      Object.assign(outcome, { provider: served.adapter, inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens });
      out.next({ kind: 'json', status: 200, body: renderResponse(request.format, { ...result, model: canonical.model }, context) });
      outcome.status = 'success';
      return;
    }

    const encoder = createStreamEncoder(request.format, context);
    let usage: Usage | undefined;
    let generatedText = '';
    // Fall back to another route only while nothing has been sent to the client.
    const { result: events, route: served } = await this.upstream.withFallback(
      model.routes,
      signal,
      async (adapter, upstreamRoute) => {
        const iterator = adapter.stream(upstreamRoute, canonical, signal)[Symbol.asyncIterator]();
        const first = await iterator.next();
        return { iterator, first };
      },
      canonical.model,
    );
    outcome.provider = served.adapter;
    outcome.status = 'success';
    const write = (event: CanonicalStreamEvent) => {
      if (event.type === 'start') event = { ...event, model: canonical.model };
      if (event.type === 'usage') usage = event.usage;
      if (event.type === 'text_delta' || event.type === 'reasoning_delta') generatedText += event.text;
      if (event.type === 'tool_call_delta') generatedText += event.argumentsDelta;
      const frames = encoder.encode(event);
      if (frames.length > 0 && !out.closed) out.next({ kind: 'sse', frames });
    };
    try {
      let next = events.first;
      while (!next.done && !signal.aborted) {
        write(next.value);
        next = await events.iterator.next();
      }
      if (signal.aborted) {
        await events.iterator.return?.();
      } else {
        const frames = encoder.finish();
        if (frames.length > 0) out.next({ kind: 'sse', frames });
      }
    } catch (error) {
      if (signal.aborted) return;
      outcome.status = 'error';
      const status = error instanceof UpstreamError ? clientStatusFor(error) : 500;
      this.upstream.recordStreamFailure(served, canonical.model);
      this.logger.warn(`stream ${request.requestId} failed after it started: ${(error as Error).message}`);
      out.next({ kind: 'sse', frames: encoder.error(status, 'The upstream provider failed mid-stream', request.requestId) });
    } finally {
      outcome.inputTokens = usage?.inputTokens ?? outcome.inputTokens;
      outcome.outputTokens = usage?.outputTokens ?? countTokens(generatedText);
    }
  }

  private fail(request: TextGenerationRequest, out: Subscriber<TextFrame>, error: unknown, outcome: Outcome): void {
    outcome.status = 'error';
    let status = 500;
    let message = 'Internal error';
    let param: string | undefined;
    if (error instanceof RequestValidationError) {
      status = 400;
      message = error.message;
      param = error.param;
    } else if (error instanceof ClientError) {
      ({ status, message, param } = error);
    } else if (error instanceof UpstreamError) {
      status = clientStatusFor(error);
      message = clientMessageFor(error, status);
    } else {
      this.logger.error(`request ${request.requestId} failed: ${(error as Error)?.stack ?? String(error)}`);
    }
    if (out.closed) return;
    const body = errorBody(request.format, status, message, param) as Record<string, unknown>;
    if (status >= 500) body.request_id = request.requestId;
    out.next({ kind: 'json', status, body });
  }

  private record(request: TextGenerationRequest, outcome: Outcome): Promise<void> {
    // Errors are recorded with what was used, and metering charges them nothing.
    return this.usage.record(request, { ...outcome, route: TEXT_ROUTES[request.format] });
  }

}
