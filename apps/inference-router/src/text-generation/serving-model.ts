import type { CanonicalRequest } from '@gateway/canonical';
import { type CatalogModel, isReasoningModel, type ModelCatalog } from '@gateway/catalog';
import { TEXT_ROUTES, type TextFormat } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';

/**
 * The catalog model a parsed text request names, checked to serve the format's route, and the
 * request as that model is to be asked it. A model the catalog does not mark as reasoning is not
 * asked to reason: a request for reasoning (an effort, a budget, `thinking`) only steers the
 * upstream, so it is ignored there, not refused (docs/api.md), and no reasoning comes back. Hiding
 * (`exclude`) is kept, for an upstream that reasons all the same.
 */
export function servingModel(catalog: ModelCatalog, parsed: CanonicalRequest, format: TextFormat): { model: CatalogModel; request: CanonicalRequest } {
  const model = catalog.get(parsed.model);
  if (!model) throw new DomainError(ErrorCode.NotFound, `The model '${parsed.model}' does not exist or is not available to you`, 'model');
  const route = TEXT_ROUTES[format];
  if (model.config.endpoints.length > 0 && !model.config.endpoints.includes(route)) {
    throw new DomainError(ErrorCode.InvalidRequest, `The model '${parsed.model}' does not serve ${route}`, 'model');
  }
  if (!parsed.reasoning || isReasoningModel(model.config)) return { model, request: parsed };
  return { model, request: { ...parsed, reasoning: { enabled: false, exclude: parsed.reasoning.exclude } } };
}
