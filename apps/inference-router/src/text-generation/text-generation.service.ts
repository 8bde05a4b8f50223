import { Injectable, Logger } from '@nestjs/common';
import { Rpc, TEXT_ROUTES, TextFrame, TextGenerationRequest } from '@gateway/contracts';
import { Observable } from 'rxjs';
import type { CanonicalStreamEvent, Usage } from '@gateway/canonical';
import { classifyDecisionModel, decisionVendor, ModelCatalog } from '@gateway/catalog';
import { clientFormat, hidesReasoning, type RenderContext } from '@gateway/client-formats';
import { DECISION_ENDPOINT } from '../decisions/decision-model';
import { errorReply, toDomainError, wireError } from '../errors/error-reply';
import { CallOutcome, MeteredCalls } from '../metering/metered-calls';
import { countPromptTokens, countTokens, type UpstreamRoute } from '@gateway/providers';
import { UpstreamCaller } from '../providers/upstream-caller';
import { affinityKey } from '../routing/affinity';
import { StoredResponsesClient } from '../stored-responses/stored-responses.client';
import { countDeltaTokens } from '../token-counting/delta-tokens';
import { RouterLiveness } from '../liveness/router-liveness';
import { InflightRequests } from './inflight-requests';
import { ReasoningSealer } from './reasoning-seal';
import { withinReservedOutput } from './reserved-output';
import { servingModel } from './serving-model';
import { DomainError, ErrorCode } from '@gateway/errors';

const REASONING_EXCLUDE = ':reasoning-exclude';

/** Where a request's frames go: its subscriber, through the caller's `shape`. */
interface FrameSink {
  next(frame: TextFrame): void;
  readonly closed: boolean;
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
    private readonly calls: MeteredCalls,
    private readonly inflight: InflightRequests,
    private readonly store: StoredResponsesClient,
    private readonly liveness: RouterLiveness,
    private readonly sealer: ReasoningSealer,
  ) {}

  /**
   * The request's frames, each as `shape` makes it (the controller's wire form: no operator per
   * frame), with heartbeats among them while it runs (proof of life, whatever the upstream is doing).
   */
  generate<Shaped = TextFrame>(
    request: TextGenerationRequest,
    shape: (frame: TextFrame) => Shaped | TextFrame = (frame) => frame,
  ): Observable<Shaped | TextFrame> {
    return new Observable<Shaped | TextFrame>((subscriber) => {
      const stopBeats = this.liveness.heartbeatsTo(subscriber);
      const out: FrameSink = {
        next: (frame) => subscriber.next(shape(frame)),
        get closed() {
          return subscriber.closed;
        },
      };
      const abort = this.inflight.register(request.requestId);
      let settled = false;
      const call = {
        caller: request,
        route: TEXT_ROUTES[request.format],
        family: Rpc.inferenceText.family,
        model: typeof request.body.model === 'string' ? request.body.model : '',
        signal: abort.signal,
      };
      void this.calls
        .run(
          call,
          (outcome) => this.run(request, out, abort.signal, outcome),
          (error) => {
            if (!out.closed) out.next({ ...errorReply(clientFormat(request.format), error, request.requestId), last: true });
          },
        )
        .finally(() => {
          settled = true;
          stopBeats();
          this.inflight.release(request.requestId, abort);
          subscriber.complete();
        });
      return () => {
        stopBeats();
        // Only a subscriber that leaves before the work settled stops it: a finished request aborts nothing.
        if (!settled) abort.abort();
      };
    });
  }

  private async run(request: TextGenerationRequest, out: FrameSink, signal: AbortSignal, outcome: CallOutcome): Promise<void> {
    const rawModel = typeof request.body.model === 'string' ? request.body.model : '';
    const excludeReasoning = rawModel.endsWith(REASONING_EXCLUDE);
    const modelId = excludeReasoning ? rawModel.slice(0, -REASONING_EXCLUDE.length) : rawModel;
    // The decision model writes no chat text (spec): point its callers at the decision endpoint,
    // version-pinned ids of it included.
    if (classifyDecisionModel(modelId, decisionVendor(this.catalog)) !== 'other') {
      throw new DomainError(ErrorCode.InvalidRequest, `The model '${modelId}' answers structured decisions only: use POST ${DECISION_ENDPOINT}`, 'model');
    }
    const body = excludeReasoning ? { ...request.body, model: modelId } : request.body;
    const format = clientFormat(request.format);
    const stored = format.storedState ? await this.store.resolve(request, format.storedState, body) : undefined;
    // Reasoning items are sealed for, and opened as, the calling account only.
    const reasoningSeal = this.sealer.forAccount(request.accountId);
    const parsed = format.parse(stored?.body ?? body, { reasoningExcludeSuffix: excludeReasoning, betas: request.betas, reasoningSeal });
    // Stored under the request's own id, so the ids of its output items are the ones a later item_reference names.
    const responseId = format.storedState?.responseId(request.requestId);
    const conversationId = stored?.conversationId;
    // A completed reply is stored (`store`) and appended to its conversation (`conversation`) before the client sees its end.
    const save =
      stored && (parsed.store || conversationId)
        ? async (response: Record<string, unknown>) => {
            if (parsed.store) await this.store.save(request, response, stored.inputItems);
            if (conversationId) await this.store.appendTurn(request, conversationId, stored.ownItems, response);
          }
        : undefined;
    outcome.model = parsed.request.model;
    const { model, request: canonical } = servingModel(this.catalog, parsed.request, request.format);
    // The gateway's own count of the prompt, made only when the upstream reports no input: a stream
    // that starts without usage (OpenAI, the simulator), or a call cut short before it reported.
    let promptTokens: number | undefined;
    const countedPrompt = () => (promptTokens ??= countPromptTokens(canonical));
    // The client's rendering keeps what it asked for; the upstream gets no more than was reserved.
    const upstreamRequest = withinReservedOutput(canonical, request.reservedOutputTokens);
    // What the client sees of the reasoning depends on whether the route that serves it applies the
    // display mode itself: decided per served route (`shownTo`).
    const context: RenderContext = {
      request: canonical,
      excludeReasoning: canonical.reasoning?.exclude ?? false,
      reasoningContentCompat: parsed.reasoningContentCompat,
      metadata: parsed.metadata,
      store: stored !== undefined && parsed.store,
      previousResponseId: parsed.previousResponseId,
      conversationId,
      reasoningSummary: parsed.reasoningSummary,
      reasoningSeal: parsed.encryptedReasoning ? reasoningSeal : undefined,
    };
    // A route's `tpm` quota counts the prompt plus the output cap; counted only for a route that has one.
    const routing = { affinity: () => affinityKey(canonical, body), tokens: () => countedPrompt() + (upstreamRequest.maxTokens ?? 0) };

    if (!canonical.stream) {
      const { result, route: served } = await this.upstream
        .withFallback(model.routes, signal, (adapter, upstreamRoute) => adapter.complete(upstreamRoute, upstreamRequest, signal), canonical.model, routing)
        .catch((error: unknown) => {
          // Failed or cancelled before the upstream reported usage: the event carries our count.
          outcome.inputTokens = countedPrompt();
          throw error;
        });
      Object.assign(outcome, { provider: served.adapter, upstreamRoute: served.label, ...billedUsage(result.usage) });
      const rendered = format.render({ ...result, model: canonical.model, ...(responseId ? { id: responseId } : {}) }, this.shownTo(served, context));
      await save?.(rendered as Record<string, unknown>);
      out.next({ kind: 'json', status: 200, body: rendered, last: true });
      return;
    }

    let usage: Usage | undefined;
    /** The input the upstream reported as the stream started: what a stream cut short is billed. */
    let startUsage: Usage | undefined;
    let generatedText = '';
    // What the client has been sent so far, for the edge to bill should this process die mid-stream.
    let streamedTokens = 0;
    // Fall back to another route only while nothing has been sent to the client.
    const {
      result: events,
      route: served,
      release,
    } = await this.upstream
      .withFallback(
        model.routes,
        signal,
        async (adapter, upstreamRoute) => {
          const iterator = adapter.stream(upstreamRoute, upstreamRequest, signal)[Symbol.asyncIterator]();
          const first = await iterator.next();
          return { iterator, first };
        },
        canonical.model,
        { ...routing, holdSlot: true },
      )
      .catch((error: unknown) => {
        outcome.inputTokens = countedPrompt();
        throw error;
      });
    Object.assign(outcome, { provider: served.adapter, upstreamRoute: served.label });
    const encoder = format.createStreamEncoder(this.shownTo(served, context));
    let saved = false;
    const emit = (frames: string[], last?: true) => {
      // Each frame says what the client has been sent, for the edge to bill should this process die.
      const inputTokens = startUsage?.inputTokens ?? countedPrompt();
      if (frames.length > 0 && !out.closed) {
        out.next({ kind: 'sse', frames, inputTokens, outputTokens: usage?.outputTokens ?? streamedTokens, ...(last ? { last } : {}) });
      }
    };
    /** Sends the frames; a promise only when they wait for the stored response's write (no promise per chunk). */
    const send = (frames: string[], last?: true): Promise<void> | undefined => {
      // The terminal frame waits for the write, so the client's next request finds the response.
      const final = save && !saved ? encoder.finalResponse?.() : undefined;
      if (final && save) {
        saved = true;
        return save(final).then(() => emit(frames, last));
      }
      emit(frames, last);
      return undefined;
    };
    /** What the upstream reported or generated: billed even when the client has gone. */
    const record = (event: CanonicalStreamEvent) => {
      if (event.type === 'start' && event.usage) startUsage = event.usage;
      if (event.type === 'usage') usage = event.usage;
      const delta = event.type === 'text_delta' || event.type === 'reasoning_delta' ? event.text : event.type === 'tool_call_delta' ? event.argumentsDelta : '';
      if (delta) {
        generatedText += delta;
        streamedTokens += countDeltaTokens(delta);
      }
    };
    const write = (event: CanonicalStreamEvent) => {
      // An upstream that reports no input at the start (OpenAI, the simulator) gets the gateway's count.
      if (event.type === 'start') {
        event = {
          ...event,
          model: canonical.model,
          ...(responseId ? { id: responseId } : {}),
          usage: event.usage ?? { inputTokens: countedPrompt(), outputTokens: 0 },
        };
      }
      return send(encoder.encode(event));
    };
    try {
      let next = events.first;
      while (!next.done) {
        record(next.value);
        if (signal.aborted) break;
        const written = write(next.value);
        if (written) await written;
        next = await events.iterator.next();
      }
      if (signal.aborted) {
        await events.iterator.return?.();
      } else {
        await send(encoder.finish(), true);
      }
    } catch (error) {
      if (signal.aborted) return;
      outcome.status = 'error';
      this.upstream.recordStreamFailure(served, canonical.model);
      this.logger.warn(`stream ${request.requestId} failed after it started: ${(error as Error).message}`);
      const failure = { ...wireError(toDomainError(error)), message: 'The upstream provider failed mid-stream' };
      out.next({ kind: 'sse', frames: encoder.error(failure, request.requestId), last: true });
    } finally {
      release();
      const input = usage ?? startUsage;
      if (input) Object.assign(outcome, billedUsage(input));
      else outcome.inputTokens = countedPrompt();
      outcome.outputTokens = usage?.outputTokens ?? countTokens(generatedText);
    }
  }

  /** The render context for the route that served the request (see `hidesReasoning`). */
  private shownTo(served: UpstreamRoute, context: RenderContext): RenderContext {
    const applies = this.upstream.adapterFor(served).appliesReasoningDisplay === true;
    return { ...context, excludeReasoning: hidesReasoning(context.request.reasoning, applies) };
  }
}

/** The usage event's token fields from a canonical usage (cache tokens only when reported). */
function billedUsage(usage: Usage): Pick<CallOutcome, 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens'> {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cachedInputTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
  };
}
