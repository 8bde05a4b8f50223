import { Injectable } from '@nestjs/common';
import { type CancelInferenceEvent, type HeartbeatFrame, isHeartbeat, routerAliveSubject, Subjects } from '@gateway/contracts';
import { JetStreamConnection } from '@gateway/platform';
import { Observable, TimeoutError } from 'rxjs';
import { isNoResponders, ReplyExchange, ReplyInbox } from './reply-inbox';

/** How long a probe waits for the NATS server's "no responders": past it, the replica is still subscribed. */
const PROBE_WAIT_MS = 1_000;
const EMPTY = new Uint8Array(0);

/**
 * Asks the NATS server whether a router replica (or any router) is still connected: a probe on
 * `inference.alive.<router>` (`inference.alive` for any), which no router ever answers. The server
 * answers "no responders" at once when nobody is subscribed; silence means the replica is there,
 * however busy. The answer does not depend on the replica's CPU, so a slow router is never taken
 * for a dead one. Probes of one subject are shared while one is in flight.
 */
@Injectable()
export class RouterProbes {
  private readonly inflight = new Map<string, Promise<boolean>>();

  constructor(
    private readonly inbox: ReplyInbox,
    private readonly connection: JetStreamConnection,
  ) {}

  alive(router: string | undefined): Promise<boolean> {
    // Our own connection down: nothing from any router reaches us, whatever state it is in.
    if (!this.connection.connected) return Promise.resolve(false);
    const subject = router ? routerAliveSubject(router) : Subjects.inferenceAlive;
    let probe = this.inflight.get(subject);
    if (!probe) {
      probe = new Promise<boolean>((resolve) => {
        let exchange: ReplyExchange | undefined;
        const settle = (alive: boolean) => {
          clearTimeout(timer);
          exchange?.close();
          this.inflight.delete(subject);
          resolve(alive);
        };
        const timer = setTimeout(() => settle(true), PROBE_WAIT_MS);
        try {
          exchange = this.inbox.request(subject, EMPTY, undefined, (message) => settle(!isNoResponders(message)));
        } catch {
          settle(false); // the connection is closed
        }
      });
      this.inflight.set(subject, probe);
    }
    return probe;
  }
}

/** The router that was serving a request disconnected from NATS (it died, or lost its connection). */
export const ROUTER_GONE = { code: 'NO_RESPONDERS', message: 'The inference router serving this request went away' };

export interface RouterWatchLimits {
  /** Silence (no frame at all, heartbeats included) after which the replica's connection is probed. */
  silenceMs: number;
  /** Longest wait without an answer frame (heartbeats do not count), however alive the router. */
  idleMs: number;
}

/**
 * One request's view of the router serving it: fed every frame that arrives, it calls `lost` (once)
 * when the router is gone — its replica's subscription vanished from NATS (probed after
 * `silenceMs` of silence; the replica names itself in its heartbeats and first stream frame), or no
 * replica ever named itself within three silences and a probe finds no router at all — or when no
 * answer frame came for `idleMs`. A router that is only slow (its frames delayed by CPU contention,
 * on either side) is probed, found subscribed, and waited for.
 */
export class RouterWatch {
  private router?: string;
  private readonly startedAt = Date.now();
  private lastFrameAt = this.startedAt;
  private lastContentAt = this.startedAt;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly probes: RouterProbes,
    private readonly limits: RouterWatchLimits,
    private readonly lost: (error: unknown) => void,
  ) {
    this.arm(Math.min(limits.silenceMs, limits.idleMs));
  }

  /** A frame arrived; `content`: an answer frame (not a heartbeat); `router`: the replica it names. */
  frame(content: boolean, router?: string): void {
    const now = Date.now();
    this.lastFrameAt = now;
    if (content) this.lastContentAt = now;
    if (router) this.router = router;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    if (!this.stopped) this.timer = setTimeout(this.check, Math.max(ms, 1));
  }

  private readonly check = (): void => {
    if (this.stopped) return;
    const now = Date.now();
    const idleLeft = this.limits.idleMs - (now - this.lastContentAt);
    if (idleLeft <= 0) return this.lose(new TimeoutError());
    const quiet = now - this.lastFrameAt;
    if (quiet < this.limits.silenceMs) return this.arm(Math.min(this.limits.silenceMs - quiet, idleLeft));
    const router = this.router;
    void this.probes.alive(router).then((alive) => {
      if (this.stopped) return;
      if (!alive) return this.lose(router ? ROUTER_GONE : new TimeoutError());
      // Nobody named itself: the request never reached a live replica (lost with one that died at once).
      if (!router && Date.now() - this.startedAt >= 3 * this.limits.silenceMs) return this.lose(new TimeoutError());
      // Subscribed, only slow: look again in a third of the silence.
      this.arm(Math.min(this.limits.silenceMs / 3, idleLeft));
    });
  };

  private lose(error: unknown): void {
    if (this.stopped) return;
    this.stop();
    this.lost(error);
  }
}

/**
 * A router's answer on a Nest request (media, decisions), its heartbeats taken by a `RouterWatch`
 * and left out: errors with what the watch says when the router is lost.
 */
export function watchRouter<T extends object>(source: Observable<T | HeartbeatFrame>, probes: RouterProbes, limits: RouterWatchLimits): Observable<T> {
  return new Observable<T>((subscriber) => {
    const watch = new RouterWatch(probes, limits, (error) => subscriber.error(error));
    const subscription = source.subscribe({
      next: (message) => {
        if (isHeartbeat(message)) return watch.frame(false, message.router);
        watch.frame(true);
        subscriber.next(message);
      },
      error: (error: unknown) => {
        watch.stop();
        subscriber.error(error);
      },
      complete: () => {
        watch.stop();
        subscriber.complete();
      },
    });
    return () => {
      watch.stop();
      subscription.unsubscribe();
    };
  });
}

/** Whether a Nest request to the router failed because the router went away or never answered. */
export function routerLost(error: unknown): boolean {
  return error instanceof TimeoutError || error === ROUTER_GONE;
}

/**
 * Tells the router serving `requestId` to stop (`inference.cancel`, on the request's connection so
 * it cannot overtake the request). `abandoned`: the client gets an error status and no answer, so
 * the router records the request as an error, which costs nothing; otherwise (the client left) it
 * is `cancelled` and billed for what the upstream used.
 */
export function cancelAtRouter(inbox: ReplyInbox, requestId: string, abandoned: boolean): void {
  const cancel: CancelInferenceEvent = abandoned ? { requestId, abandoned } : { requestId };
  try {
    inbox.publish(Subjects.inferenceCancel, JSON.stringify(cancel));
  } catch {
    // The connection is down: the router's request, if it got it, ends on its own.
  }
}
