import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { BudgetStore } from '@gateway/billing';
import { CallerContext, usageRefusal } from '@gateway/contracts';
import { JetStreamConnection, UsageOutbox } from '@gateway/platform';

/** How long an edge shutting down waits for its refusals to be acknowledged before it logs them as lost. */
const SHUTDOWN_PUBLISH_WAIT_MS = 10_000;

/**
 * Requests refused because a budget window of their key was spent (a proxy key's 402, a DevPass
 * key's 429) go into the request log, naming the window, so the key's owner can see which window
 * stopped them: a `refused` usage event, charged nothing, published to JetStream. At most one per
 * key, window and minute (`BudgetStore.firstRefusal`): a client retrying in a loop writes one row
 * a minute, not one per attempt.
 */
@Injectable()
export class UsageRefusals implements BeforeApplicationShutdown {
  private readonly logger = new Logger(UsageRefusals.name);
  private readonly outbox: UsageOutbox;

  constructor(
    jetstream: JetStreamConnection,
    @Inject(BudgetStore) private readonly store: Pick<BudgetStore, 'firstRefusal'>,
  ) {
    this.outbox = new UsageOutbox(() => jetstream.publisher, this.logger);
  }

  /** Logs the refusal of `caller`'s request by `window` (`<period>@<timezone>`) unless one was logged this minute. */
  async record(caller: CallerContext, usage: { model: string; route: string }, window: string): Promise<void> {
    const first = await this.store.firstRefusal(caller.accountId, caller.keyId, window, Math.floor(Date.now() / 60_000)).catch((error: Error) => {
      this.logger.warn(`refusal of ${caller.requestId} not logged: ${error.message}`);
      return false;
    });
    if (first) void this.outbox.send(usageRefusal(caller, usage, window));
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.outbox.drain(SHUTDOWN_PUBLISH_WAIT_MS);
  }
}
