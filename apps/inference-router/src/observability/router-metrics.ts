import { Injectable } from '@nestjs/common';
import { GatewayMetrics, Metrics } from '@gateway/platform';
import { DecisionService } from '../decisions/decision.service';
import { MediaCalls } from '../media/media-call';
import { InflightRequests } from '../text-generation/inflight-requests';

/**
 * The router's in-flight gauge: the generations, decisions and media calls (embeddings,
 * moderations, images) it is serving, each an upstream call; read when scraped.
 */
@Injectable()
export class RouterMetrics {
  constructor(metrics: GatewayMetrics, generations: InflightRequests, decisions: DecisionService, media: MediaCalls) {
    metrics.gauge(Metrics.inflightRequests, (gauge) => gauge.set(generations.size + decisions.inFlight + media.inFlight));
  }
}
