import { Inject, Injectable, Logger } from '@nestjs/common';
import { GatewayMetrics, Metrics } from '@gateway/platform';
import type { FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Counter } from 'prom-client';
import { EdgeEnv } from '../config/edge.env';

/**
 * Writes the pieces of a started answer (stream events, audio) to the client, and bounds what waits
 * for a client that does not read. The router sends as fast as the upstream answers and nothing
 * slows it for one client, so what the client has not taken queues here: a client whose unread
 * backlog would pass `STREAM_CLIENT_BACKLOG_BYTES` is cut off. Its connection is destroyed, so the
 * relay ends as the client's leaving: the router stops the upstream call and bills what it used,
 * as for a client that disconnected. Memory per open stream is bounded by that limit (plus the
 * socket's own buffers).
 */
@Injectable()
export class ClientBacklog {
  private readonly logger = new Logger(ClientBacklog.name);
  private readonly limit: number;
  private readonly cut: Counter<'route'>;

  constructor(@Inject(EdgeEnv) env: Pick<EdgeEnv, 'STREAM_CLIENT_BACKLOG_BYTES'>, metrics: GatewayMetrics) {
    this.limit = env.STREAM_CLIENT_BACKLOG_BYTES;
    this.cut = metrics.counter(Metrics.streamClientsCut);
  }

  /**
   * Returns whether the client is still there; a piece for a client already cut off (or gone) is
   * dropped. A piece larger than the limit still goes to a client that is not behind.
   */
  write(request: FastifyRequest, raw: ServerResponse, chunk: string | Uint8Array): boolean {
    if (raw.destroyed) return false;
    const behind = raw.writableLength;
    if (behind === 0) {
      raw.write(chunk);
      return true;
    }
    // String pieces are counted in UTF-16 units, as few as a third of their UTF-8 bytes.
    if (behind + chunk.length > this.limit) {
      const route = request.routeOptions.url ?? 'unmatched';
      this.logger.warn(`request ${String(request.id)} (${route}): client cut off, ${behind} bytes unread (STREAM_CLIENT_BACKLOG_BYTES ${this.limit})`);
      this.cut.inc({ route });
      raw.destroy();
      return false;
    }
    // A view into a larger buffer (a raw frame is part of the NATS read that brought many streams'
    // frames): a client that is behind gets a copy to queue, so its backlog holds its own bytes.
    raw.write(typeof chunk === 'string' ? chunk : Buffer.from(chunk));
    return true;
  }
}
