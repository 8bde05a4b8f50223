import { Injectable } from '@nestjs/common';
import { Rpc, type RouterFamily } from '@gateway/contracts';
import { JetStreamConnection, NatsRpcClient, ReplyExchange } from '@gateway/platform';
import { TimeoutError } from 'rxjs';

/** How long a probe waits for the NATS server's "no responders": past it, the replica is still subscribed. */
const PROBE_WAIT_MS = 1_000;

/** After a server of the cluster went away, how long a request that has heard nothing yet waits before it counts as lost. */
export const LOST_REQUEST_GRACE_MS = 1_000;

/**
 * Asks the NATS server whether a router replica (or any router of a family) is still connected: a
 * probe on `inference.alive.<router>` (`inference.alive.family.<family>` for any router serving the
 * family), which no router ever answers. The server
 * answers "no responders" at once when nobody is subscribed; silence means the replica is there,
 * however busy. The answer does not depend on the replica's CPU, so a slow router is never taken
 * for a dead one. Probes of one subject are shared while one is in flight.
 */
@Injectable()
export class RouterProbes {
  private readonly inflight = new Map<string, Promise<boolean>>();

  constructor(
    private readonly client: NatsRpcClient,
    private readonly connection: JetStreamConnection,
  ) {}

  /** `router`: that replica; otherwise any router serving `family` (any router at all without one). */
  /**
   * Calls `listener` each time this edge's own NATS connection loses its server: the frames sent to
   * it meanwhile are lost, so no request in flight can trust its answer to be whole.
   */
  onDisconnect(listener: () => void): () => void {
    return this.connection.onDisconnect(listener);
  }

  /** Calls `listener` each time a server of the NATS cluster goes away: a request on its way through it may be lost. */
  onServerLost(listener: () => void): () => void {
    return this.connection.onServerLost(listener);
  }

  alive(router: string | undefined, family?: RouterFamily): Promise<boolean> {
    // Our own connection down: nothing from any router reaches us, whatever state it is in.
    if (!this.connection.connected) return Promise.resolve(false);
    const contract = router || !family ? Rpc.inferenceAlive(router) : Rpc.inferenceFamilyAlive(family);
    const subject = contract.subject;
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
          exchange = this.client.probe(contract, () => settle(false));
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

/**
 * The router serving a request named itself anew mid-request: its connection lost its NATS server
 * and was made again elsewhere (see the router's RouterLiveness), and frames it sent meanwhile may
 * be lost.
 */
export const ROUTER_RECONNECTED = {
  code: 'DISCONNECT',
  message: 'The inference router serving this request lost its NATS connection; part of its answer may be lost',
};

/** A server of the NATS cluster went away before any router named itself: the request may have been lost with it. */
export const REQUEST_LOST = {
  code: 'DISCONNECT',
  message: 'A NATS server went away while this request was on its way to the inference router; it may never have arrived',
};

/** This edge's own NATS connection lost its server while the request was in flight. */
export const EDGE_DISCONNECTED = { code: 'DISCONNECT', message: "The gateway's connection to NATS was lost while this request was in flight" };

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
 * replica ever named itself within three silences and a probe finds no router of the request's
 * family at all, or the replica names itself anew (it reconnected, and frames may be lost) — or
 * when no answer frame came for `idleMs`. A router that is only slow (its frames delayed by CPU
 * contention, on either side) is probed, found subscribed, and waited for.
 */
export class RouterWatch {
  private router?: string;
  private readonly startedAt = Date.now();
  private lastFrameAt = this.startedAt;
  private lastContentAt = this.startedAt;
  /** Whether any frame came (heartbeats included). */
  private heard = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly probes: RouterProbes,
    private readonly limits: RouterWatchLimits,
    /** `idle`: no answer frame within `idleMs`, the router alive; otherwise the router is gone. */
    private readonly lost: (error: unknown, idle: boolean) => void,
    /** The request's family: before a replica names itself, the routers of that family are probed. */
    private readonly family?: RouterFamily,
  ) {
    this.arm(Math.min(limits.silenceMs, limits.idleMs));
  }

  /**
   * A frame arrived; `content`: an answer frame (not a heartbeat); `router`: the replica it names.
   * A replica naming itself by another id than before has reconnected: the request is lost.
   */
  frame(content: boolean, router?: string): void {
    const now = Date.now();
    this.heard = true;
    this.lastFrameAt = now;
    if (content) this.lastContentAt = now;
    if (router && this.router && router !== this.router) return this.lose(ROUTER_RECONNECTED);
    if (router) this.router = router;
  }

  /**
   * A server of the NATS cluster went away. A request that has heard nothing from any router may
   * have been lost with it (no frame would ever come, and three silences would pass before the edge
   * gave up): it counts as lost when nothing comes within `LOST_REQUEST_GRACE_MS`. Otherwise the
   * router is probed at once rather than after a silence.
   */
  serverLost(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    if (this.heard) return this.probe(this.limits.idleMs - (Date.now() - this.lastContentAt));
    // A request that reached a live router hears from it by then (its first heartbeat comes after half a second).
    this.timer = setTimeout(() => (this.heard ? this.check() : this.lose(REQUEST_LOST)), LOST_REQUEST_GRACE_MS);
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
    if (idleLeft <= 0) return this.lose(new TimeoutError(), true);
    const quiet = now - this.lastFrameAt;
    if (quiet < this.limits.silenceMs) return this.arm(Math.min(this.limits.silenceMs - quiet, idleLeft));
    this.probe(idleLeft);
  };

  private probe(idleLeft: number): void {
    const router = this.router;
    void this.probes.alive(router, this.family).then((alive) => {
      if (this.stopped) return;
      if (!alive) return this.lose(router ? ROUTER_GONE : new TimeoutError());
      // Nobody named itself: the request never reached a live replica (lost with one that died at once).
      if (!router && Date.now() - this.startedAt >= 3 * this.limits.silenceMs) return this.lose(new TimeoutError());
      // Subscribed, only slow: look again in a third of the silence.
      this.arm(Math.min(this.limits.silenceMs / 3, idleLeft));
    });
  }

  private lose(error: unknown, idle = false): void {
    if (this.stopped) return;
    this.stop();
    this.lost(error, idle);
  }
}
