import type { ModelCatalog } from '@gateway/catalog';
import { AnthropicAdapter } from './anthropic/anthropic.adapter';
import { OpenAIAdapter } from './openai/openai.adapter';
import type { ProviderAdapter } from './provider-adapter';
import { SimulatorAdapter } from './simulator/simulator.adapter';

/** What the adapters are built with: plain values from the app's configuration. */
export interface ProviderOptions {
  /** The simulator's delay per output token (SIMULATOR_TOKEN_DELAY_MS); default 0. */
  simulatorTokenDelayMs?: number;
  /** Max sockets per upstream origin of each HTTP adapter (UPSTREAM_MAX_CONNECTIONS). */
  upstreamMaxConnections?: number;
}

/**
 * Every provider by the `adapter` name its catalog routes use: a new provider is its folder under
 * `libs/providers/src/` plus one line here; the catalog's routes name it in `adapter`.
 */
export function createProviderAdapters(options: ProviderOptions = {}): Record<string, ProviderAdapter> {
  return {
    openai: new OpenAIAdapter({ connections: options.upstreamMaxConnections }),
    anthropic: new AnthropicAdapter({ connections: options.upstreamMaxConnections }),
    simulator: new SimulatorAdapter({ tokenDelayMs: options.simulatorTokenDelayMs ?? 0 }),
  };
}

/**
 * The one registry of the router and the video worker: one instance of each adapter per process
 * (each HTTP adapter holds its connection pool), closed at shutdown (Nest calls
 * `onApplicationShutdown` on a provider that has it).
 */
export class ProviderRegistry {
  readonly byName: Record<string, ProviderAdapter>;

  constructor(options: ProviderOptions = {}) {
    this.byName = createProviderAdapters(options);
  }

  /** Closes the upstream connection pools. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all(Object.values(this.byName).map((adapter) => adapter.close?.()));
  }
}

/**
 * Refuses, at startup, a catalog that names a provider this router does not have, or an HTTP
 * provider's route without `base_url`: better a pod that does not start than requests that fail.
 */
export function assertCatalogServable(catalog: ModelCatalog, adapters: Record<string, ProviderAdapter>): void {
  for (const model of catalog.all()) {
    for (const route of model.routes) {
      const adapter = adapters[route.adapter];
      if (!adapter) {
        throw new Error(`model ${model.config.id}: no provider named '${route.adapter}' (known: ${Object.keys(adapters).join(', ')})`);
      }
      if (adapter.needsBaseUrl !== false && !route.base_url) {
        throw new Error(`model ${model.config.id}: a ${route.adapter} route needs base_url`);
      }
    }
  }
}
