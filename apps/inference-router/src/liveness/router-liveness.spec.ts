import { RouterFamilies, Rpc } from '@gateway/contracts';
import type { JetStreamConnection } from '@gateway/platform';
import { Subject } from 'rxjs';
import { RouterLiveness } from './router-liveness';

/** A JetStream connection whose subscriptions the test can see. */
function fakeConnection() {
  const subscribed = new Set<string>();
  const connection = {
    nats: {
      subscribe: (subject: string) => {
        subscribed.add(subject);
        return { unsubscribe: () => subscribed.delete(subject) };
      },
    },
  } as unknown as JetStreamConnection;
  return { connection, subscribed };
}

describe('RouterLiveness', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('takes a new id when its answers may have been lost: the old one unsubscribed, every request in flight told at once', () => {
    const { connection, subscribed } = fakeConnection();
    const liveness = new RouterLiveness(connection, { INFERENCE_HEARTBEAT_MS: 2000, ROUTER_FAMILIES: [...RouterFamilies] });
    liveness.onApplicationBootstrap();
    const before = liveness.id;
    expect(subscribed.has(Rpc.inferenceAlive(before).subject)).toBe(true);

    const source = new Subject<string>();
    const frames: unknown[] = [];
    const running = liveness.withHeartbeats(source).subscribe((frame) => frames.push(frame));
    source.next('a frame');

    liveness.renew();
    const after = liveness.id;
    expect(after).not.toBe(before);
    expect(subscribed.has(Rpc.inferenceAlive(before).subject)).toBe(false);
    expect(subscribed.has(Rpc.inferenceAlive(after).subject)).toBe(true);
    // The family and any-router subscriptions stay.
    expect(subscribed.has(Rpc.inferenceAlive().subject)).toBe(true);
    // Without waiting for the next beat: the edge learns before any later frame.
    expect(frames).toEqual(['a frame', { kind: 'heartbeat', router: after }]);

    jest.advanceTimersByTime(2500);
    expect(frames.at(-1)).toEqual({ kind: 'heartbeat', router: after });

    // A request that ended is not told.
    running.unsubscribe();
    const count = frames.length;
    liveness.renew();
    expect(frames).toHaveLength(count);
    liveness.onApplicationShutdown();
    expect(subscribed.size).toBe(0);
  });
});
