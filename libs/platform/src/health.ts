import { Controller, Get, Inject, Optional, Res, Type } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { GracefulShutdown } from './observability/graceful-shutdown';
import { deadConnections } from './connection-resilience';
import { Handles } from './nats-transport/handles';
import type { RpcContract } from '@gateway/contracts';

/** One dependency whose reachability decides readiness. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');
export const SERVICE_NAME = Symbol('SERVICE_NAME');

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, 'up' | 'down'>;
  /** Present while the process shuts down: it takes no new work, whatever its dependencies say. */
  draining?: true;
}

/** Readiness as a probe sees it: 503 while shutting down (checked first) or while a dependency is down. */
export async function readiness(checks: ReadinessCheck[], shutdown?: GracefulShutdown): Promise<ReadinessReport> {
  if (shutdown?.draining) return { ready: false, checks: {}, draining: true };
  return runChecks(checks);
}

export async function runChecks(checks: ReadinessCheck[], timeoutMs = 2000): Promise<ReadinessReport> {
  const results = await Promise.all(
    checks.map(async (check) => {
      const timeout = new Promise<boolean>((resolve) => setTimeout(resolve, timeoutMs, false).unref());
      const up = await Promise.race([check.check().catch(() => false), timeout]);
      return [check.name, up ? 'up' : 'down'] as const;
    }),
  );
  return { ready: results.every(([, state]) => state === 'up'), checks: Object.fromEntries(results) };
}

export interface LivenessReport {
  status: 'ok' | 'dead';
  /** The connections closed for good, when there are. */
  closed?: string[];
}

/**
 * Liveness: 503 once a connection to NATS or Redis is closed for good (it will never reconnect), so
 * the orchestrator restarts the process; a connection that is reconnecting keeps it alive (readiness
 * reports it instead). While shutting down, connections close on purpose and the process stays alive.
 */
export function liveness(reply: FastifyReply, shutdown?: GracefulShutdown): LivenessReport {
  const closed = shutdown?.draining ? [] : deadConnections();
  if (closed.length === 0) {
    reply.status(200);
    return { status: 'ok' };
  }
  reply.status(503);
  return { status: 'dead', closed };
}

/** `/healthz` (alive) and `/readyz` (dependencies reachable) of a back-end service. */
@Controller()
export class HealthController {
  constructor(
    @Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[],
    @Optional() private readonly shutdown?: GracefulShutdown,
  ) {}

  @Get('healthz')
  alive(@Res({ passthrough: true }) reply: FastifyReply): LivenessReport {
    return liveness(reply, this.shutdown);
  }

  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessReport> {
    const report = await readiness(this.checks, this.shutdown);
    reply.status(report.ready ? 200 : 503);
    return report;
  }
}

/** Answers `health.<service>` over NATS, so a caller can prove the whole hop works. */
export function healthRpcController(contract: RpcContract): Type<unknown> {
  @Controller()
  class HealthRpcController {
    constructor(@Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[]) {}

    @Handles(contract)
    ping(): Promise<ReadinessReport> {
      return runChecks(this.checks);
    }
  }
  return HealthRpcController;
}
