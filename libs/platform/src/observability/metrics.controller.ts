import { Controller, Get, Header, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { GatewayMetrics } from './gateway-metrics';

/** `GET /metrics`: the Prometheus exposition of a service, on its health port. */
@Controller()
export class MetricsController {
  constructor(private readonly metrics: GatewayMetrics) {}

  @Get('metrics')
  @Header('cache-control', 'no-store')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const text = await this.metrics.render();
    void reply.header('content-type', this.metrics.contentType);
    return text;
  }
}
