import { Injectable, Logger } from '@nestjs/common';
import { CallerContext, MediaReply, MediaRoute, UsageStatus } from '@gateway/contracts';
import { CatalogModel, ModelCatalog } from '@gateway/catalog';
import { errorBody } from '../client-formats/error-bodies';
import { clientMessageFor, clientStatusFor, UpstreamError } from '../providers/provider-adapter';
import { UsagePublisher } from '../usage/usage.publisher';

/** A request the router refuses itself: status, message and the field at fault. */
export class MediaRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

/** What one media call used, for its usage event; filled in as the call goes. */
export interface MediaOutcome {
  status: UsageStatus;
  model: string;
  inputTokens: number;
  /** Images generated. */
  units?: number;
  provider?: string;
}

/**
 * What embeddings, moderations and images share: the model a request names (or the endpoint's
 * default), failures as OpenAI error bodies with their status, and exactly one usage event per
 * request — status `error` for every failure, which metering charges nothing.
 */
@Injectable()
export class MediaCalls {
  private readonly logger = new Logger(MediaCalls.name);
  private running = 0;

  /** Media calls in progress (each an upstream call), for the router's in-flight gauge. */
  get inFlight(): number {
    return this.running;
  }

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly usage: UsagePublisher,
  ) {}

  /**
   * The catalog model serving `route`: the one named, else the first in the catalog that serves
   * it. Unknown: 404; serving other endpoints: 400 naming them.
   */
  resolveModel(route: MediaRoute, requested: string | null | undefined): CatalogModel {
    if (requested === undefined || requested === null) {
      const fallback = this.catalog.firstServing(route);
      if (!fallback) throw new MediaRequestError(400, `No model serving ${route} is configured; name one in model`, 'model');
      return fallback;
    }
    const model = this.catalog.get(requested);
    if (!model) throw new MediaRequestError(404, `The model '${requested}' does not exist or is not available to you`, 'model');
    if (!model.config.endpoints.includes(route)) {
      throw new MediaRequestError(400, `The model '${requested}' serves ${model.config.endpoints.join(', ') || 'no endpoint'}, not ${route}`, 'model');
    }
    return model;
  }

  async run(caller: CallerContext, route: MediaRoute, work: (outcome: MediaOutcome) => Promise<MediaReply>): Promise<MediaReply> {
    const outcome: MediaOutcome = { status: 'error', model: '', inputTokens: 0 };
    this.running++;
    try {
      const reply = await work(outcome);
      outcome.status = 'success';
      return reply;
    } catch (error) {
      outcome.status = 'error';
      outcome.units = undefined;
      return this.failure(caller, route, error);
    } finally {
      this.running--;
      void this.usage.record(caller, {
        model: outcome.model,
        route,
        inputTokens: outcome.inputTokens,
        outputTokens: 0,
        units: outcome.units,
        status: outcome.status,
        provider: outcome.provider,
      });
    }
  }

  private failure(caller: CallerContext, route: MediaRoute, error: unknown): MediaReply {
    let status = 500;
    let message = 'Internal error';
    let param: string | undefined;
    if (error instanceof MediaRequestError) {
      ({ status, message, param } = error);
    } else if (error instanceof UpstreamError) {
      status = clientStatusFor(error);
      message = clientMessageFor(error, status);
      this.logger.warn(`${route} ${caller.requestId} failed upstream: ${error.message}`);
    } else {
      this.logger.error(`${route} ${caller.requestId} failed: ${(error as Error)?.stack ?? String(error)}`);
    }
    const body = errorBody('chat', status, message, param) as Record<string, unknown>;
    if (status >= 500) body.request_id = caller.requestId;
    return { kind: 'json', status, body };
  }
}
