import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { HeartbeatFrame, Rpc } from '@gateway/contracts';
import { JetStreamConnection } from '@gateway/platform';
import type { Subscription } from 'nats';
import { randomBytes } from 'node:crypto';
import { Observable } from 'rxjs';
import { RouterEnv } from '../router.env';

/** The first heartbeat of a request: soon, so the edge learns which replica serves it. */
const FIRST_HEARTBEAT_MS = 500;

/**
 * This replica's liveness, as the edge follows it. The replica has an id, named in every heartbeat
 * frame it sends, and subscribes `inference.alive.<id>` (and, in its queue group,
 * `inference.alive.family.<family>` for each family it serves, and `inference.alive`, which edges of
 * the release before families probe) without ever answering: when a request goes silent, the edge
 * sends a probe there (its family's when no replica has named itself yet), and the NATS
 * server answers "no responders" at once if this replica's connection is gone. A replica that is
 * only slow (its CPU shared, thousands of streams) keeps its subscriptions, so a probe never takes
 * it for dead — the answer comes from the NATS server, not from this busy process.
 */
@Injectable()
export class RouterLiveness implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly id = randomBytes(8).toString('hex');
  private readonly heartbeat: HeartbeatFrame = { kind: 'heartbeat', router: this.id };
  private subscriptions: Subscription[] = [];

  constructor(
    private readonly connection: JetStreamConnection,
    @Inject(RouterEnv) private readonly env: Pick<RouterEnv, 'INFERENCE_HEARTBEAT_MS' | 'ROUTER_FAMILIES'>,
  ) {}

  /** The probes this replica's subscriptions answer "present" to. */
  get probes(): { subject: string; queue?: string | false }[] {
    return [Rpc.inferenceAlive(this.id), Rpc.inferenceAlive(), ...this.env.ROUTER_FAMILIES.map((family) => Rpc.inferenceFamilyAlive(family))];
  }

  /** Once the connection is up (module init), with the request subscriptions. */
  onApplicationBootstrap(): void {
    const nats = this.connection.nats;
    this.subscriptions = this.probes.map(({ subject, queue }) => nats.subscribe(subject, { queue: queue || undefined, callback: () => undefined }));
  }

  /** Last of all: a draining replica is still alive while it finishes its requests. */
  onApplicationShutdown(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  /**
   * `source`'s values with this replica's heartbeat frames among them while it runs: the first
   * after half a second (a quick answer sends none), then every `INFERENCE_HEARTBEAT_MS` (none
   * when that is 0: unit tests that compare every frame).
   */
  withHeartbeats<T>(source: Observable<T>): Observable<T | HeartbeatFrame> {
    if (this.env.INFERENCE_HEARTBEAT_MS <= 0) return source;
    return new Observable<T | HeartbeatFrame>((subscriber) => {
      let every: NodeJS.Timeout | undefined;
      const beat = () => {
        if (!subscriber.closed) subscriber.next(this.heartbeat);
      };
      const first = setTimeout(
        () => {
          beat();
          every = setInterval(beat, this.env.INFERENCE_HEARTBEAT_MS);
        },
        Math.min(FIRST_HEARTBEAT_MS, this.env.INFERENCE_HEARTBEAT_MS),
      );
      const stop = () => {
        clearTimeout(first);
        clearInterval(every);
      };
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
}
