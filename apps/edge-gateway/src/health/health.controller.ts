import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { GracefulShutdown, READINESS_CHECKS, ReadinessCheck, readiness, ReadinessReport } from '@gateway/platform';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/auth.decorators';

/** Probes for the orchestrator, outside the API and its reference. */
@ApiExcludeController()
@Controller()
@Public()
export class EdgeHealthController {
  constructor(
    @Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[],
    private readonly shutdown: GracefulShutdown,
  ) {}

  @Get('healthz')
  @HttpCode(200)
  alive(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready when NATS and Redis answer and the PostgreSQL-backed services answer over NATS; 503 from
   * the moment a shutdown starts, so the load balancer stops sending requests first.
   */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessReport> {
    const report = await readiness(this.checks, this.shutdown);
    reply.status(report.ready ? 200 : 503);
    return report;
  }
}
