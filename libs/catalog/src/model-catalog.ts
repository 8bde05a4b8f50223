import { ModelEntry } from '@gateway/contracts';
import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { BREAKER_DEFAULTS, CatalogConfig, ModelConfig, RouteConfig } from './catalog.config';

export class CatalogError extends Error {}

/** A route ready to call: its key resolved from the environment, its routing settings with their defaults. */
export interface ResolvedRoute extends RouteConfig {
  apiKey?: string;
  /** `<model id>/<name or index in the catalog's list>`: metrics, traces and usage events. */
  label: string;
  /** Effective priority (see `effectivePriorities`) and weight. */
  priority: number;
  weight: number;
  breakerPolicy: { failures: number; windowMs: number; cooldownMs: number };
  /** Whether the route has rpm, tpm or max_concurrency (enforced in Redis). */
  hasQuota: boolean;
}

/**
 * A model whose routes set neither `priority` nor `weight` keeps the catalog's historical meaning:
 * routes are tried in order, each a fallback of the one before (priority = index). As soon as one
 * route sets either, an absent priority is 0 (one group, spread by weight).
 */
export function effectivePriorities(routes: RouteConfig[]): number[] {
  const routing = routes.some((route) => route.priority !== undefined || route.weight !== undefined);
  return routes.map((route, index) => route.priority ?? (routing ? 0 : index));
}

export interface CatalogModel {
  config: ModelConfig;
  routes: ResolvedRoute[];
  entry: ModelEntry;
}

/** The catalog marks a model that reasons with the tag `reasoning` (also what `GET /v1/models` lists). */
export const REASONING_TAG = 'reasoning';

export function isReasoningModel(config: ModelConfig): boolean {
  return config.tags?.includes(REASONING_TAG) ?? false;
}

function describe(errors: ValidationError[], path: string, models: unknown[]): string[] {
  return errors.flatMap((error) => {
    let here = path ? `${path}.${error.property}` : error.property;
    if (path === 'models') {
      const id = (models[Number(error.property)] as { id?: unknown } | undefined)?.id;
      here = `models[${error.property}]${typeof id === 'string' ? ` (${id})` : ''}`;
    }
    const own = Object.values(error.constraints ?? {}).map((message) => `${here}: ${message}`);
    return [...own, ...describe(error.children ?? [], here, models)];
  });
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

function toEntry(model: ModelConfig): ModelEntry {
  const entry: ModelEntry = { id: model.id, object: 'model' };
  const fields = [
    'name',
    'description',
    'owned_by',
    'created',
    'tokens',
    'pricing',
    'endpoints',
    'premium_model',
    'voices',
    'sizes',
    'qualities',
    'tags',
    'styles',
    'metadata',
  ] as const;
  for (const field of fields) {
    const value = model[field];
    if (value !== undefined) (entry as unknown as Record<string, unknown>)[field] = field === 'pricing' ? { ...model.pricing } : value;
  }
  return entry;
}

/**
 * The model catalog: public ids, their listing fields and upstream routes. Validated at startup with
 * messages naming the model and field; routes whose provider key is absent are dropped, and models
 * left without a route are left out (reported through `onDropped`).
 */
export interface CatalogOptions {
  requireCredentials?: boolean;
}

export class ModelCatalog {
  private readonly models = new Map<string, CatalogModel>();

  constructor(models: CatalogModel[]) {
    for (const model of models) this.models.set(model.config.id, model);
  }

  /**
   * `requireCredentials: false` keeps models whose provider key is not in this process's environment:
   * services that only price or budget requests (edge, metering) must know every model the router
   * may serve, without holding the provider keys themselves.
   */
  static fromFile(path: string, env: NodeJS.ProcessEnv, onDropped: (message: string) => void, options: CatalogOptions = {}): ModelCatalog {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new CatalogError(`cannot read the model catalog ${path}: ${(error as Error).message}`);
    }
    return ModelCatalog.fromYaml(text, env, onDropped, path, options);
  }

  static fromYaml(
    text: string,
    env: NodeJS.ProcessEnv,
    onDropped: (message: string) => void,
    source = 'catalog',
    { requireCredentials = true }: CatalogOptions = {},
  ): ModelCatalog {
    let raw: unknown;
    try {
      raw = parse(text);
    } catch (error) {
      throw new CatalogError(`${source} is not valid YAML: ${(error as Error).message}`);
    }
    const config = plainToInstance(CatalogConfig, raw ?? {});
    const errors = validateSync(config, { forbidUnknownValues: false });
    const rawModels = ((raw as { models?: unknown[] })?.models ?? []) as unknown[];
    if (errors.length > 0) throw new CatalogError(`${source} is invalid:\n  ${describe(errors, '', rawModels).join('\n  ')}`);
    const seen = new Set<string>();
    const models: CatalogModel[] = [];
    for (const model of config.models) {
      if (seen.has(model.id)) throw new CatalogError(`${source} is invalid: model ${model.id} is listed twice`);
      seen.add(model.id);
      const routes: ResolvedRoute[] = [];
      const priorities = effectivePriorities(model.routes);
      const names = new Set<string>();
      model.routes.forEach((route, index) => {
        const name = route.name ?? String(index);
        if (names.has(name)) throw new CatalogError(`${source} is invalid: model ${model.id} has two routes named ${name}`);
        names.add(name);
        if (requireCredentials && route.api_key_env && !env[route.api_key_env]) return;
        const breaker = { ...BREAKER_DEFAULTS, ...stripUndefined(route.breaker ?? {}) };
        routes.push({
          ...route,
          apiKey: route.api_key_env ? env[route.api_key_env] : undefined,
          label: `${model.id}/${name}`,
          priority: priorities[index],
          weight: route.weight ?? 1,
          breakerPolicy: { failures: breaker.failures, windowMs: breaker.window_seconds * 1000, cooldownMs: breaker.cooldown_seconds * 1000 },
          hasQuota: route.rpm !== undefined || route.tpm !== undefined || route.max_concurrency !== undefined,
        });
      });
      if (routes.length === 0) {
        const missing = model.routes
          .map((route) => route.api_key_env)
          .filter(Boolean)
          .join(', ');
        onDropped(`model ${model.id} left out of the catalog: no credentials (set ${missing})`);
        continue;
      }
      models.push({ config: model, routes, entry: toEntry(model) });
    }
    return new ModelCatalog(models);
  }

  /** Every model served, in catalog order. */
  all(): CatalogModel[] {
    return [...this.models.values()];
  }

  get(id: string): CatalogModel | undefined {
    return this.models.get(id);
  }

  /** The first model (in catalog order) that serves `endpoint`: the default where a request may omit `model`. */
  firstServing(endpoint: string): CatalogModel | undefined {
    return [...this.models.values()].find((model) => model.config.endpoints.includes(endpoint));
  }

  list(): ModelEntry[] {
    return [...this.models.values()].map((model) => model.entry);
  }
}
