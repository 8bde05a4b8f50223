import { Injectable } from '@nestjs/common';
import { CallerContext, MediaReply, MediaRoute, MediaRoutes, Rpc, RouterFamily } from '@gateway/contracts';
import { CatalogModel, ModelCatalog } from '@gateway/catalog';
import { chatFormat } from '@gateway/client-formats';
import { errorReply } from '../errors/error-reply';
import { CallOutcome, MeteredCalls } from '../metering/metered-calls';
import { InflightRequests } from '../text-generation/inflight-requests';
import { DomainError, ErrorCode } from '@gateway/errors';

/** The family of each media route: that of its subject in the `Rpc` table. */
const FAMILY_OF: Record<MediaRoute, RouterFamily> = {
  [MediaRoutes.embeddings]: Rpc.inferenceEmbeddings.family,
  [MediaRoutes.moderations]: Rpc.inferenceModerations.family,
  [MediaRoutes.images]: Rpc.inferenceImages.family,
  [MediaRoutes.imageEdits]: Rpc.inferenceImageEdits.family,
  [MediaRoutes.transcriptions]: Rpc.inferenceTranscriptions.family,
  [MediaRoutes.translations]: Rpc.inferenceTranslations.family,
};

/** The reply of a call the edge abandoned (it answered its client already): sent to nobody. */
const ABANDONED_REPLY: MediaReply = { kind: 'json', status: 499, body: null };

/**
 * What embeddings, moderations and images share: the model a request names (or the endpoint's
 * default), and a metered call whose failures are OpenAI error bodies with their status.
 */
@Injectable()
export class MediaCalls {
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly calls: MeteredCalls,
    private readonly inflight: InflightRequests,
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

  /**
   * The call, in flight under its request id: an edge that gave up on it (the client got an error
   * status) cancels it as abandoned, and it is recorded as an error, never charged. Its reply then
   * has nobody to go to: an empty error reply stands in for it.
   */
  async run(caller: CallerContext, route: MediaRoute, work: (outcome: CallOutcome) => Promise<MediaReply>): Promise<MediaReply> {
    const abort = this.inflight.register(caller.requestId);
    try {
      const reply = await this.calls.run({ caller, route, family: FAMILY_OF[route], signal: abort.signal }, work, (error) =>
        errorReply(chatFormat, error, caller.requestId),
      );
      return reply ?? ABANDONED_REPLY;
    } finally {
      this.inflight.release(caller.requestId, abort);
    }
  }
}
