import { Injectable } from '@nestjs/common';
import { GatewayMetrics, Metrics } from '@gateway/platform';
import { MeteredCalls } from '../metering/metered-calls';

/**
 * The router's in-flight gauge: the generations, decisions and media calls (embeddings,
 * moderations, images) it is serving, each an upstream call; read when scraped.
 */
@Injectable()
export class RouterMetrics {
  constructor(metrics: GatewayMetrics, calls: MeteredCalls) {
    metrics.gauge(Metrics.inflightRequests, (gauge) => gauge.set(calls.inFlight));
  }
}
