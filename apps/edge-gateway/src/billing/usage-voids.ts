import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { CallerContext, usageVoid } from '@gateway/contracts';
import { JetStreamConnection, UsageOutbox } from '@gateway/platform';

/** How long an edge shutting down waits for its voids to be acknowledged before it logs them as lost. */
const SHUTDOWN_PUBLISH_WAIT_MS = 10_000;

/**
 * The voids of requests this edge answered with an error status and no part of an answer while the
 * router may have finished them (their answer lost with a NATS server, the router silent past its
 * limits): each is published to JetStream, held until acknowledged, and metering charges the
 * request nothing, whether the router's usage event was recorded before the void or comes after it.
 */
@Injectable()
export class UsageVoids implements BeforeApplicationShutdown {
  private readonly logger = new Logger(UsageVoids.name);
  private readonly outbox: UsageOutbox;

  constructor(jetstream: JetStreamConnection) {
    // The publisher is read at each attempt: while the connection is away, an attempt fails and is retried.
    this.outbox = new UsageOutbox(() => jetstream.publisher, this.logger);
  }

  /** Charges the request nothing: its model (as the client named it, or '') and usage route go in its log entry. */
  void(caller: CallerContext, model: unknown, route: string): void {
    void this.outbox.send(usageVoid(caller, { model: typeof model === 'string' ? model : '', route }));
  }

  /** Voids not yet acknowledged. */
  get pendingCount(): number {
    return this.outbox.size;
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.outbox.drain(SHUTDOWN_PUBLISH_WAIT_MS);
  }
}
