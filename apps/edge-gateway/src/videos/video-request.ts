import { ModelCatalog } from '@gateway/catalog';
import { VIDEO_ROUTE, VideoGenerationBody } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';

/** The size of a model that lists none (`sizes` in the catalog). */
export const DEFAULT_VIDEO_SIZE = '16:9';

/**
 * BullMQ refuses custom job ids that are integers or contain `:`. Job ids are the gateway's request
 * ids (`req_<hex>`), never such; an id in a re-attach URL that is one cannot name a job.
 */
export function isUsableJobId(id: string): boolean {
  return !id.includes(':') && `${parseInt(id, 10)}` !== id;
}

export interface VideoPlan {
  model: string;
  prompt: string;
  size: string;
}

/**
 * The catalog's rules for a well-formed body: the model must exist (404) and serve
 * `videos.generations` (400), and the size must be one the model lists (400, naming the allowed
 * ones); without a size the model's first is used.
 */
export function planVideoRequest(catalog: ModelCatalog, body: VideoGenerationBody): VideoPlan {
  const entry = catalog.get(body.model);
  if (!entry) throw new DomainError(ErrorCode.NotFound, `The model '${body.model}' does not exist or is not available to you`, 'model');
  if (!entry.config.endpoints.includes(VIDEO_ROUTE)) {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      `model '${body.model}' does not generate videos: pick a model whose endpoints include ${VIDEO_ROUTE} (GET /v1/models)`,
      'model',
    );
  }
  const allowed = entry.config.sizes ?? [];
  const size = body.size ?? allowed[0] ?? DEFAULT_VIDEO_SIZE;
  if (allowed.length > 0 && !allowed.includes(size)) {
    throw new DomainError(ErrorCode.InvalidRequest, `size '${size}' is not available for ${entry.config.id}; allowed sizes: ${allowed.join(', ')}`, 'size');
  }
  return { model: entry.config.id, prompt: body.prompt, size };
}
