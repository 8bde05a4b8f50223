import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AnthropicAdapter } from './anthropic/anthropic.adapter';
import { OpenAIAdapter } from './openai/openai.adapter';
import { ProviderAdapter } from './provider-adapter';
import { SimulatorAdapter } from './simulator/simulator.adapter';

export const SIMULATOR_TOKEN_DELAY_MS = Symbol('SIMULATOR_TOKEN_DELAY_MS');

export interface ProviderAdapterOptions {
  simulatorTokenDelayMs: number;
}

/**
 * Every provider by the `adapter` name its catalog routes use: a new provider is its folder under
 * `providers/` plus one line here (and its name in the catalog's `ADAPTERS`, which refuses unknown
 * names at startup).
 */
export function createProviderAdapters(options: ProviderAdapterOptions): Record<string, ProviderAdapter> {
  return {
    openai: new OpenAIAdapter(),
    anthropic: new AnthropicAdapter(),
    simulator: new SimulatorAdapter({ tokenDelayMs: options.simulatorTokenDelayMs }),
  };
}

/** One instance of each adapter per process (each HTTP adapter holds its connection pool). */
@Injectable()
export class ProviderAdapters implements OnApplicationShutdown {
  readonly byName: Record<string, ProviderAdapter>;

  constructor(@Inject(SIMULATOR_TOKEN_DELAY_MS) simulatorTokenDelayMs: number) {
    this.byName = createProviderAdapters({ simulatorTokenDelayMs });
  }

  /** Closes the upstream connection pools. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all(Object.values(this.byName).map((adapter) => adapter.close?.()));
  }
}
