import { DECISION_MODEL_ID } from '@gateway/contracts';
import type { ModelCatalog } from './model-catalog';

/** The model maker's namespace of the `<vendor>/jev` aliases when the catalog entry names none. */
export const DEFAULT_DECISION_VENDOR = 'systemone';

/** `metadata.vendor` of the catalog's `jev` entry, else `systemone`. */
export function decisionVendor(catalog: ModelCatalog): string {
  const vendor = catalog.get(DECISION_MODEL_ID)?.config.metadata?.['vendor'];
  return typeof vendor === 'string' && vendor.length > 0 ? vendor : DEFAULT_DECISION_VENDOR;
}

/**
 * What a requested model id means for the decision endpoint (the spec's "Versioning"):
 * - `current`: `jev`, `jev-latest`, `<vendor>/jev`, `<vendor>/jev-latest` — the served version;
 * - `pinned`: `jev-<version>` or `<vendor>/jev-<version>` with a non-empty version other than
 *   `latest` — refused, only the current version is served;
 * - `other`: anything else (another vendor's namespace, other models, `jev-`, case variants).
 */
export type DecisionModelKind = 'current' | 'pinned' | 'other';

export function classifyDecisionModel(model: string, vendor: string): DecisionModelKind {
  const prefix = `${vendor}/`;
  const bare = model.startsWith(prefix) ? model.slice(prefix.length) : model;
  if (bare === DECISION_MODEL_ID || bare === `${DECISION_MODEL_ID}-latest`) return 'current';
  const pin = `${DECISION_MODEL_ID}-`;
  if (bare.startsWith(pin) && bare.length > pin.length) return 'pinned';
  return 'other';
}
