import { Injectable } from '@nestjs/common';

/**
 * How long a cancel for a request this replica is not (yet) serving is remembered. The cancel and
 * the request travel on different NATS connections, so a cancel can overtake the request it
 * cancels; other replicas simply forget it after this long.
 */
export const EARLY_CANCEL_TTL_MS = 60_000;

/** The requests this replica is serving, so a cancel broadcast can abort the right upstream call. */
@Injectable()
export class InflightRequests {
  private readonly controllers = new Map<string, AbortController>();
  /** Request id → when its cancel arrived, oldest first. */
  private readonly earlyCancels = new Map<string, number>();

  get size(): number {
    return this.controllers.size;
  }

  /** The request's abort controller, already aborted when its cancel arrived first. */
  register(requestId: string): AbortController {
    const controller = new AbortController();
    this.controllers.set(requestId, controller);
    if (this.earlyCancels.delete(requestId)) controller.abort();
    return controller;
  }

  release(requestId: string): void {
    this.controllers.delete(requestId);
  }

  /** Aborts the request if this replica serves it; otherwise remembers the cancel for a while. */
  cancel(requestId: string): boolean {
    const controller = this.controllers.get(requestId);
    if (controller) {
      controller.abort();
      return true;
    }
    const now = Date.now();
    for (const [id, at] of this.earlyCancels) {
      if (now - at < EARLY_CANCEL_TTL_MS) break;
      this.earlyCancels.delete(id);
    }
    this.earlyCancels.set(requestId, now);
    return false;
  }
}
