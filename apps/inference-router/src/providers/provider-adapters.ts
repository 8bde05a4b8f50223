import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AnthropicAdapter } from './anthropic/anthropic.adapter';
import { OpenAIAdapter } from './openai/openai.adapter';
import { ProviderAdapter, UpstreamRoute } from './provider-adapter';
import { SimulatorAdapter } from './simulator/simulator.adapter';

export const SIMULATOR_TOKEN_DELAY_MS = Symbol('SIMULATOR_TOKEN_DELAY_MS');

/** One instance of each adapter per process (each HTTP adapter holds its connection pool). */
@Injectable()
export class ProviderAdapters implements OnApplicationShutdown {
  readonly byName: Record<UpstreamRoute['adapter'], ProviderAdapter>;
  private readonly openai = new OpenAIAdapter();
  private readonly anthropic = new AnthropicAdapter();

  constructor(@Inject(SIMULATOR_TOKEN_DELAY_MS) simulatorTokenDelayMs: number) {
    this.byName = {
      openai: this.openai,
      anthropic: this.anthropic,
      simulator: new SimulatorAdapter({ tokenDelayMs: simulatorTokenDelayMs }),
    };
  }

  /** Closes the upstream connection pools. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.openai.close(), this.anthropic.close()]);
  }
}
