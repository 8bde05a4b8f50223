import { Inject, Injectable } from '@nestjs/common';
import { RouterFamilies } from '@gateway/contracts';
import { GatewayMetrics, Metrics } from '@gateway/platform';
import { MeteredCalls } from '../metering/metered-calls';
import { RouterEnv } from '../router.env';

/**
 * The router's in-flight gauge, by family: the generations, decisions and media calls (embeddings,
 * moderations, images) it is serving, each an upstream call; read when scraped, one series per
 * family the replica serves (0 included, so an autoscaler's query always finds one). And which
 * families the replica serves, in one series per replica, so a dashboard can group any metric of
 * the router's pods by family (`* on(pod) group_left(families) gateway_router_families`).
 */
@Injectable()
export class RouterMetrics {
  constructor(metrics: GatewayMetrics, calls: MeteredCalls, @Inject(RouterEnv) env: Pick<RouterEnv, 'ROUTER_FAMILIES'>) {
    // In the table's order, however the variable lists them: one label value per set of families.
    const families = RouterFamilies.filter((family) => env.ROUTER_FAMILIES.includes(family));
    metrics.gauge(Metrics.inflightRequests, (gauge) => {
      for (const family of families) gauge.set({ family }, calls.inFlightOf(family));
    });
    metrics.gauge(Metrics.routerFamilies).set({ families: families.join(',') }, 1);
  }
}
