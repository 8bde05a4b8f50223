import { Injectable } from '@nestjs/common';

/**
 * How long a cancel for a request this replica is not (yet) serving is remembered. The cancel and
 * the request travel on different NATS connections, so a cancel can overtake the request it
 * cancels; other replicas simply forget it after this long.
 */
export const EARLY_CANCEL_TTL_MS = 60_000;

/**
 * The abort reason of a request the edge abandoned: it answered the client with an error status
 * before any answer reached it, so the request is recorded as `error` (charged nothing).
 */
export const ABANDONED_BY_EDGE = 'abandoned by the edge';

/** The requests this replica is serving, so a cancel broadcast can abort the right upstream call. */
@Injectable()
export class InflightRequests {
  private readonly controllers = new Map<string, AbortController>();
  /** Request id → when its cancel arrived (and whether the edge abandoned it), oldest first. */
  private readonly earlyCancels = new Map<string, { at: number; abandoned: boolean }>();

  get size(): number {
    return this.controllers.size;
  }

  /** The request's abort controller, already aborted when its cancel arrived first. */
  register(requestId: string): AbortController {
    const controller = new AbortController();
    this.controllers.set(requestId, controller);
    const early = this.earlyCancels.get(requestId);
    if (early) {
      this.earlyCancels.delete(requestId);
      controller.abort(early.abandoned ? ABANDONED_BY_EDGE : undefined);
    }
    return controller;
  }

  /**
   * Forgets the request once its work settled. `controller` is the one `register` gave: an edge
   * may send a request again under the same id (its first answer lost with a NATS server), and the
   * first sending finishing must not take the second's place away.
   */
  release(requestId: string, controller?: AbortController): void {
    if (controller === undefined || this.controllers.get(requestId) === controller) this.controllers.delete(requestId);
  }

  /**
   * Aborts the request if this replica serves it; otherwise remembers the cancel for a while.
   * `abandoned`: the edge gave up on it and answered the client with an error (see `ABANDONED_BY_EDGE`).
   */
  cancel(requestId: string, abandoned = false): boolean {
    const controller = this.controllers.get(requestId);
    if (controller) {
      controller.abort(abandoned ? ABANDONED_BY_EDGE : undefined);
      return true;
    }
    const now = Date.now();
    for (const [id, early] of this.earlyCancels) {
      if (now - early.at < EARLY_CANCEL_TTL_MS) break;
      this.earlyCancels.delete(id);
    }
    this.earlyCancels.set(requestId, { at: now, abandoned });
    return false;
  }
}
