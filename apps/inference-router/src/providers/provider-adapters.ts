import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { ModelCatalog } from '@gateway/catalog';
import { AnthropicAdapter } from './anthropic/anthropic.adapter';
import { OpenAIAdapter } from './openai/openai.adapter';
import { ProviderAdapter } from './provider-adapter';
import { SimulatorAdapter } from './simulator/simulator.adapter';

export const SIMULATOR_TOKEN_DELAY_MS = Symbol('SIMULATOR_TOKEN_DELAY_MS');
export const UPSTREAM_MAX_CONNECTIONS = Symbol('UPSTREAM_MAX_CONNECTIONS');

export interface ProviderAdapterOptions {
  simulatorTokenDelayMs: number;
  /** Max sockets per upstream origin of each HTTP adapter (UPSTREAM_MAX_CONNECTIONS). */
  upstreamMaxConnections?: number;
}

/**
 * Every provider by the `adapter` name its catalog routes use: a new provider is its folder under
 * `providers/` plus one line here; the catalog's routes name it in `adapter`.
 */
export function createProviderAdapters(options: ProviderAdapterOptions): Record<string, ProviderAdapter> {
  return {
    openai: new OpenAIAdapter({ connections: options.upstreamMaxConnections }),
    anthropic: new AnthropicAdapter({ connections: options.upstreamMaxConnections }),
    simulator: new SimulatorAdapter({ tokenDelayMs: options.simulatorTokenDelayMs }),
  };
}

/** One instance of each adapter per process (each HTTP adapter holds its connection pool). */
@Injectable()
export class ProviderAdapters implements OnApplicationShutdown {
  readonly byName: Record<string, ProviderAdapter>;

  constructor(@Inject(SIMULATOR_TOKEN_DELAY_MS) simulatorTokenDelayMs: number, @Inject(UPSTREAM_MAX_CONNECTIONS) upstreamMaxConnections: number) {
    this.byName = createProviderAdapters({ simulatorTokenDelayMs, upstreamMaxConnections });
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
