import { Injectable } from '@nestjs/common';
import { ResolvedRoute } from '@gateway/catalog';
import { OpenAIVideoAdapter } from './openai-video.adapter';
import { SimulatorVideoAdapter } from './simulator-video.adapter';
import { VideoAdapter, VideoJobError } from './video-adapter';

/** The video protocol of each catalog adapter; `anthropic` has none. */
@Injectable()
export class VideoAdapters {
  private readonly adapters: Record<string, VideoAdapter | undefined> = {
    simulator: new SimulatorVideoAdapter(),
    openai: new OpenAIVideoAdapter(),
  };

  for(route: ResolvedRoute): VideoAdapter {
    const adapter = this.adapters[route.adapter];
    if (!adapter) throw new VideoJobError('invalid_model_config', `the ${route.adapter} adapter cannot generate videos`, false);
    return adapter;
  }
}
