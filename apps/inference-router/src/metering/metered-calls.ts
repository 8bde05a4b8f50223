import { Injectable, Logger } from '@nestjs/common';
import { type CallerContext, type RouterFamily, type UsageRecordedEvent, type UsageStatus } from '@gateway/contracts';
import { UpstreamError } from '@gateway/providers';
import { toDomainError } from '../errors/error-reply';
import { UsagePublisher } from '../usage/usage.publisher';
import { ABANDONED_BY_EDGE } from '../text-generation/inflight-requests';
import { ErrorCode, type DomainError } from '@gateway/errors';

/** What one call used, for its usage event; the work fills it in as it goes. */
export interface CallOutcome {
  /** `success` unless the work says otherwise (a stream that failed after it started) or throws. */
  status: UsageStatus;
  model: string;
  /** Every input token, cache reads and writes included. */
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, read from / written to the provider's prompt cache, when the upstream reported them. */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Images generated. */
  units?: number;
  /** Audio transcribed or translated, in milliseconds (priced per second). */
  audioMs?: number;
  /** Input characters of a speech request billed by characters (its upstream reported no tokens). */
  characters?: number;
  provider?: string;
  /** The catalog label of the upstream route that served it (`<model>/<route>`). */
  upstreamRoute?: string;
}

export interface MeteredCall {
  caller: CallerContext;
  /** The endpoint family it belongs to, for the per-family in-flight gauge. */
  family: RouterFamily;
  /** The usage route (`chat/completions`, `embeddings`, `decisions`, ...). */
  route: UsageRecordedEvent['route'];
  /** The model until the work knows better (the id the client sent). */
  model?: string;
  /**
   * Fires when the client went away: the call is `cancelled` and gets no error reply (`error`, when
   * the edge abandoned it with the reason `ABANDONED_BY_EDGE`).
   */
  signal?: AbortSignal;
}

/**
 * The lifecycle every metered router call shares (text generation, media, decisions): counted in
 * flight while it runs; exactly one usage event when it settles — `error` for every failure, which
 * metering charges nothing, `cancelled` when the client went away; and every failure turned into
 * a `DomainError` for the caller's reply, an unexpected one logged with its stack.
 */
@Injectable()
export class MeteredCalls {
  private readonly logger = new Logger(MeteredCalls.name);
  private readonly running = new Map<RouterFamily, number>();

  constructor(private readonly usage: UsagePublisher) {}

  /** Calls in progress, for the router's in-flight gauge. */
  get inFlight(): number {
    let total = 0;
    for (const count of this.running.values()) total += count;
    return total;
  }

  /** Calls of `family` in progress. */
  inFlightOf(family: RouterFamily): number {
    return this.running.get(family) ?? 0;
  }

  /**
   * Runs `work`; on failure returns what `reply` makes of the error, or undefined when the client
   * already went away (nobody is listening, whatever the upstream call threw on abort).
   */
  async run<T>(call: MeteredCall, work: (outcome: CallOutcome) => Promise<T>, reply: (error: DomainError) => T): Promise<T | undefined> {
    const outcome: CallOutcome = { status: 'success', model: call.model ?? '', inputTokens: 0, outputTokens: 0 };
    this.running.set(call.family, this.inFlightOf(call.family) + 1);
    try {
      return await work(outcome);
    } catch (error) {
      if (call.signal?.aborted) return undefined;
      outcome.status = 'error';
      outcome.units = undefined;
      outcome.audioMs = undefined;
      return reply(this.failure(call, error));
    } finally {
      this.running.set(call.family, this.inFlightOf(call.family) - 1);
      // Abandoned by the edge: its client got an error status, and is never charged for it.
      if (call.signal?.aborted) outcome.status = call.signal.reason === ABANDONED_BY_EDGE ? 'error' : 'cancelled';
      const { model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, units, audioMs, characters, status, provider, upstreamRoute } = outcome;
      const cache = { ...(cacheReadTokens ? { cacheReadTokens } : {}), ...(cacheWriteTokens ? { cacheWriteTokens } : {}) };
      const spoken = characters !== undefined ? { characters } : {};
      const heard = audioMs !== undefined ? { audioMs } : {};
      void this.usage.record(call.caller, {
        model,
        route: call.route,
        inputTokens,
        outputTokens,
        ...cache,
        units,
        ...spoken,
        ...heard,
        status,
        provider,
        upstreamRoute,
      });
    }
  }

  private failure(call: MeteredCall, error: unknown): DomainError {
    const domain = toDomainError(error);
    const request = `${call.route} ${call.caller.requestId}`;
    if (error instanceof UpstreamError) this.logger.warn(`${request} failed upstream: ${error.message}`);
    else if (domain.code === ErrorCode.Internal) this.logger.error(`${request} failed: ${(error as Error)?.stack ?? String(error)}`);
    return domain;
  }
}
