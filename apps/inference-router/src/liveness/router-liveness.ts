import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { HeartbeatFrame, Rpc } from '@gateway/contracts';
import { JetStreamConnection, onTransportDisconnect } from '@gateway/platform';
import type { Subscription } from 'nats';
import { randomBytes } from 'node:crypto';
import { Observable, type Subscriber } from 'rxjs';
import { RouterEnv } from '../router.env';

/** The first heartbeat of a request: soon, so the edge learns which replica serves it. */
const FIRST_HEARTBEAT_MS = 500;

const newId = (): string => randomBytes(8).toString('hex');

/**
 * This replica's liveness, as the edge follows it. The replica has an id, named in every heartbeat
 * frame it sends, and subscribes `inference.alive.<id>` (and, in its queue group,
 * `inference.alive.family.<family>` for each family it serves, and `inference.alive`, which edges of
 * the release before families probe) without ever answering: when a request goes silent, the edge
 * sends a probe there (its family's when no replica has named itself yet), and the NATS
 * server answers "no responders" at once if this replica's connection is gone. A replica that is
 * only slow (its CPU shared, thousands of streams) keeps its subscriptions, so a probe never takes
 * it for dead — the answer comes from the NATS server, not from this busy process.
 *
 * When the connection its answers travel on loses its NATS server (one of a cluster killed), the
 * frames it sent just before may be lost, though nats.js reconnects to another server within
 * milliseconds: the replica then takes a new id (dropping the old one's subscription, so a probe of
 * it hears "gone") and sends every request in flight a heartbeat under the new id at once, ahead of
 * any later frame. Either way the edge learns that the answer may have a gap, and ends it with a
 * 503 (or a stream's error event) rather than wait for frames that will never come.
 */
@Injectable()
export class RouterLiveness implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RouterLiveness.name);
  private current = newId();
  private subscriptions: Subscription[] = [];
  private idSubscription?: Subscription;
  /** Sends one request's heartbeat now: one per request in flight with heartbeats. */
  private readonly beats = new Set<() => void>();
  private stopWatching?: () => void;

  constructor(
    private readonly connection: JetStreamConnection,
    @Inject(RouterEnv) private readonly env: Pick<RouterEnv, 'INFERENCE_HEARTBEAT_MS' | 'ROUTER_FAMILIES'>,
  ) {}

  /** The id this replica names itself by now. */
  get id(): string {
    return this.current;
  }

  /** The probes this replica's subscriptions answer "present" to. */
  get probes(): { subject: string; queue?: string | false }[] {
    return [Rpc.inferenceAlive(this.id), Rpc.inferenceAlive(), ...this.env.ROUTER_FAMILIES.map((family) => Rpc.inferenceFamilyAlive(family))];
  }

  /** Once the connection is up (module init), with the request subscriptions. */
  onApplicationBootstrap(): void {
    const nats = this.connection.nats;
    this.subscriptions = this.probes.map(({ subject, queue }) => nats.subscribe(subject, { queue: queue || undefined, callback: () => undefined }));
    this.idSubscription = this.subscriptions[0];
    this.stopWatching = onTransportDisconnect(() => this.renew());
  }

  /** Last of all: a draining replica is still alive while it finishes its requests. */
  onApplicationShutdown(): void {
    this.stopWatching?.();
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  /** A new id, subscribed before the old one is dropped, and a heartbeat under it for every request in flight. */
  renew(): void {
    const old = this.idSubscription;
    const before = this.current;
    this.current = newId();
    this.logger.warn(
      `the NATS connection answers go on lost its server: replica ${before} renamed ${this.current}, so that edges end ` +
        `the ${this.beats.size} request(s) in flight here rather than wait for frames that may be lost`,
    );
    if (old) {
      const fresh = this.connection.nats.subscribe(Rpc.inferenceAlive(this.current).subject, { callback: () => undefined });
      this.subscriptions = [fresh, ...this.subscriptions.filter((subscription) => subscription !== old)];
      this.idSubscription = fresh;
      old.unsubscribe();
    }
    for (const beat of this.beats) beat();
  }

  /**
   * `source`'s values with this replica's heartbeat frames among them while it runs (see
   * `heartbeatsTo`).
   */
  withHeartbeats<T>(source: Observable<T>): Observable<T | HeartbeatFrame> {
    if (this.env.INFERENCE_HEARTBEAT_MS <= 0) return source;
    return new Observable<T | HeartbeatFrame>((subscriber) => {
      const stop = this.heartbeatsTo(subscriber);
      const subscription = source.subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => {
          stop();
          subscriber.error(error);
        },
        complete: () => {
          stop();
          subscriber.complete();
        },
      });
      return () => {
        stop();
        subscription.unsubscribe();
      };
    });
  }

  /**
   * Sends this replica's heartbeat frames to `subscriber` until the returned function is called (or
   * it closes): the first after half a second (a quick answer sends none), then every
   * `INFERENCE_HEARTBEAT_MS` (none when that is 0: unit tests that compare every frame). For a
   * producer that emits its frames itself, without an operator between it and its subscriber.
   */
  heartbeatsTo(subscriber: Subscriber<HeartbeatFrame>): () => void {
    if (this.env.INFERENCE_HEARTBEAT_MS <= 0) return () => undefined;
    let every: NodeJS.Timeout | undefined;
    const beat = () => {
      if (!subscriber.closed) subscriber.next({ kind: 'heartbeat', router: this.id });
    };
    this.beats.add(beat);
    const first = setTimeout(
      () => {
        beat();
        every = setInterval(beat, this.env.INFERENCE_HEARTBEAT_MS);
      },
      Math.min(FIRST_HEARTBEAT_MS, this.env.INFERENCE_HEARTBEAT_MS),
    );
    return () => {
      clearTimeout(first);
      clearInterval(every);
      this.beats.delete(beat);
    };
  }
}
