import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { GracefulShutdown, liveness, LivenessReport, READINESS_CHECKS, ReadinessCheck, readiness, ReadinessReport } from '@gateway/platform';
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

  /** 503 once NATS or Redis is closed for good (never while merely reconnecting): the orchestrator restarts the pod. */
  @Get('healthz')
  alive(@Res({ passthrough: true }) reply: FastifyReply): LivenessReport {
    return liveness(reply, this.shutdown);
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
