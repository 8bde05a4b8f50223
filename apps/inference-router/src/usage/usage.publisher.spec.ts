import { UsageRecordedEvent } from '@gateway/contracts';
import { JetStreamConnection } from '@gateway/platform';
import { UsagePublisher } from './usage.publisher';

const caller = { accountId: 'acct_1', keyId: 'key_1', keyType: 'master' as const, maskedKey: 'sk-...abcd', ip: '127.0.0.1', requestId: 'req_1' };
const usage = { model: 'sim-chat', route: 'chat.completions', inputTokens: 3, outputTokens: 5, status: 'success' as const };

/** The publisher over a JetStream stand-in whose acknowledgements the test releases. */
function setup() {
  const published: { event: UsageRecordedEvent; msgID?: string }[] = [];
  const acks: (() => void)[] = [];
  const connection = {
    publisher: {
      publish: (_subject: string, data: Uint8Array, options: { msgID?: string }) => {
        published.push({ event: JSON.parse(new TextDecoder().decode(data)) as UsageRecordedEvent, msgID: options.msgID });
        return new Promise<void>((resolve) => acks.push(resolve));
      },
    },
  } as unknown as JetStreamConnection;
  return { publisher: new UsagePublisher(connection), published, acks };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('UsagePublisher', () => {
  it('publishes after what the caller sends in the same turn (the reply), with the request id as message id', async () => {
    const { publisher, published } = setup();
    const order: string[] = [];
    void publisher.record(caller, usage);
    order.push(`reply sent; published so far: ${published.length}`);
    await nextTurn();
    await nextTurn();
    expect(order).toEqual(['reply sent; published so far: 0']);
    expect(published).toEqual([{ event: expect.objectContaining({ requestId: 'req_1', inputTokens: 3, outputTokens: 5 }), msgID: 'req_1' }]);
  });

  it('keeps the event pending until JetStream acknowledges it, and shutdown waits for it', async () => {
    const { publisher, published, acks } = setup();
    void publisher.record(caller, usage);
    expect(publisher.pendingCount).toBe(1);
    let closed = false;
    const shutdown = publisher.beforeApplicationShutdown().then(() => (closed = true));
    await nextTurn();
    await nextTurn();
    expect(published).toHaveLength(1);
    expect(closed).toBe(false);
    acks[0]();
    await shutdown;
    expect(closed).toBe(true);
    expect(publisher.pendingCount).toBe(0);
  });

  it('holds an event published before the JetStream connection is made, and publishes it once the connection is up', async () => {
    // A router that took a request while it was still starting: its connection does not exist yet.
    const published: string[] = [];
    let connected = false;
    const connection = {
      get publisher() {
        if (!connected) throw new Error('JetStream is not connected yet');
        return {
          publish: (_subject: string, _data: Uint8Array, options: { msgID: string }) => {
            published.push(options.msgID);
            return Promise.resolve();
          },
        };
      },
    } as unknown as JetStreamConnection;
    const publisher = new UsagePublisher(connection);
    const recorded = publisher.record(caller, usage);
    await nextTurn();
    expect(publisher.pendingCount).toBe(1);
    connected = true;
    await recorded;
    expect(published).toEqual(['req_1']);
    expect(publisher.pendingCount).toBe(0);
  });

  it('keeps retrying a publish JetStream refuses past the quick retries, until it is acknowledged', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      let refusals = 0;
      const connection = {
        publisher: {
          publish: () => (refusals++ < 8 ? Promise.reject(new Error('no responders')) : Promise.resolve()),
        },
      } as unknown as JetStreamConnection;
      const publisher = new UsagePublisher(connection);
      let done = false;
      const recorded = publisher.record(caller, usage).then(() => (done = true));
      for (let i = 0; i < 200 && !done; i++) await jest.advanceTimersByTimeAsync(1_000);
      await recorded;
      expect(refusals).toBe(9);
      expect(publisher.pendingCount).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('sends an event held unacknowledged as error (charged nothing) once the edge abandoned its request; one acknowledged stays as it was', async () => {
    // JetStream refuses the first attempt (the router's NATS server went away): the event is held.
    const attempts: UsageRecordedEvent[] = [];
    let refuse = true;
    const connection = {
      publisher: {
        publish: async (_subject: string, data: Uint8Array) => {
          attempts.push(JSON.parse(new TextDecoder().decode(data)) as UsageRecordedEvent);
          if (refuse) throw new Error('CONNECTION_CLOSED');
        },
      },
    } as unknown as JetStreamConnection;
    const publisher = new UsagePublisher(connection);
    publisher.publishAfterReply = false;
    const held = publisher.record(caller, usage);
    await nextTurn();
    expect(attempts.map((event) => event.status)).toEqual(['success']);
    expect(publisher.abandon('req_1')).toBe(true);
    refuse = false;
    await held;
    expect(attempts.at(-1)).toMatchObject({ requestId: 'req_1', status: 'error' });
    // Acknowledged now: nothing is left to change.
    expect(publisher.abandon('req_1')).toBe(false);
  }, 15_000);
});
