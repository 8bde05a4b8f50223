import { Injectable } from '@nestjs/common';
import { CallerContext, ErrorCode, MediaReply, MediaRoute } from '@gateway/contracts';
import { CatalogModel, ModelCatalog } from '@gateway/catalog';
import { chatFormat } from '@gateway/client-formats';
import { DomainError } from '@gateway/platform';
import { errorReply } from '../errors/error-reply';
import { CallOutcome, MeteredCalls } from '../metering/metered-calls';

/**
 * What embeddings, moderations and images share: the model a request names (or the endpoint's
 * default), and a metered call whose failures are OpenAI error bodies with their status.
 */
@Injectable()
export class MediaCalls {
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly calls: MeteredCalls,
  ) {}

  /**
   * The catalog model serving `route`: the one named, else the first in the catalog that serves
   * it. Unknown: 404; serving other endpoints: 400 naming them.
   */
  resolveModel(route: MediaRoute, requested: string | null | undefined): CatalogModel {
    if (requested === undefined || requested === null) {
      const fallback = this.catalog.firstServing(route);
      if (!fallback) throw new DomainError(ErrorCode.InvalidRequest, `No model serving ${route} is configured; name one in model`, 'model');
      return fallback;
    }
    const model = this.catalog.get(requested);
    if (!model) throw new DomainError(ErrorCode.NotFound, `The model '${requested}' does not exist or is not available to you`, 'model');
    if (!model.config.endpoints.includes(route)) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `The model '${requested}' serves ${model.config.endpoints.join(', ') || 'no endpoint'}, not ${route}`,
        'model',
      );
    }
    return model;
  }

  async run(caller: CallerContext, route: MediaRoute, work: (outcome: CallOutcome) => Promise<MediaReply>): Promise<MediaReply> {
    const reply = await this.calls.run({ caller, route }, work, (error) => errorReply(chatFormat, error, caller.requestId));
    // Only a cancelled call has no reply, and media calls cannot be cancelled.
    return reply!;
  }
}
