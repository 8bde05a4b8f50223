import { connect, type Msg, type NatsConnection } from 'nats';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startTestNatsServer, type TestNatsServer } from '../../../tools/jest/nats-test-server';
import { coalesceNatsWrites } from './nats-write-coalescing';

/** How many times the connection hands bytes to its socket (nats.js's transport.send). */
function countWrites(connection: NatsConnection): { count: number } {
  const transport = (connection as unknown as { protocol: { transport: { send(frame: Uint8Array): void } } }).protocol.transport;
  const counter = { count: 0 };
  const send = transport.send.bind(transport);
  transport.send = (frame) => {
    counter.count++;
    send(frame);
  };
  return counter;
}

/**
 * Coalesced NATS writes against a real NATS server: messages published from many callbacks of one
 * event-loop turn (as a router relays chunks of many streams read in one poll) leave in one write
 * and all arrive, in order; a lone publish is not held back.
 */
describe('coalesceNatsWrites (real NATS server)', () => {
  let natsServer: TestNatsServer | undefined;
  let url: string;
  let subscriber: NatsConnection;

  beforeAll(async () => {
    natsServer = await startTestNatsServer();
    url = natsServer.url;
    subscriber = await connect({ servers: url });
  });

  afterAll(async () => {
    await subscriber?.close();
    natsServer?.stop();
  });

  /** Publishes `count` messages, each from a timer callback of its own, all due in the same turn; resolves with what arrived. */
  async function publishFromTimers(publisher: NatsConnection, subject: string, count: number): Promise<string[]> {
    const arrived: string[] = [];
    const done = new Promise<void>((resolve) => {
      subscriber.subscribe(subject, {
        max: count,
        callback: (_error, message: Msg) => {
          arrived.push(message.string());
          if (arrived.length === count) resolve();
        },
      });
    });
    await subscriber.flush();
    for (let i = 0; i < count; i++) setTimeout(() => publisher.publish(subject, String(i)), 0);
    await done;
    return arrived;
  }

  it('sends the messages of one turn’s callbacks in one write, all of them, in order', async () => {
    const plain = await connect({ servers: url });
    const coalesced = coalesceNatsWrites(await connect({ servers: url }));
    const plainWrites = countWrites(plain);
    const coalescedWrites = countWrites(coalesced);

    const expected = Array.from({ length: 200 }, (_, i) => String(i));
    expect(await publishFromTimers(plain, 'coalescing.plain', 200)).toEqual(expected);
    expect(await publishFromTimers(coalesced, 'coalescing.coalesced', 200)).toEqual(expected);
    // nats.js alone flushes after each callback: a write per message.
    expect(plainWrites.count).toBeGreaterThanOrEqual(200);
    expect(coalescedWrites.count).toBeLessThanOrEqual(5);
    await plain.close();
    await coalesced.close();
  });

  it('answers a request at once: a lone publish leaves in the same turn', async () => {
    const responder = coalesceNatsWrites(await connect({ servers: url }));
    const requester = coalesceNatsWrites(await connect({ servers: url }));
    responder.subscribe('coalescing.echo', { callback: (_error, message) => message.respond(message.data) });
    await responder.flush();
    const reply = await requester.request('coalescing.echo', 'ping', { timeout: 2000 });
    expect(reply.string()).toBe('ping');
    await responder.close();
    await requester.close();
  });

  it('sends what was published just before close', async () => {
    const arrived = new Promise<string>((resolve) => {
      subscriber.subscribe('coalescing.last-words', { max: 1, callback: (_error, message) => resolve(message.string()) });
    });
    await subscriber.flush();
    const publisher = coalesceNatsWrites(await connect({ servers: url }));
    publisher.publish('coalescing.last-words', 'bye');
    await publisher.close();
    expect(await arrived).toBe('bye');
  });

  it('refuses a connection that is not nats.js’s, rather than leaving writes uncoalesced', () => {
    expect(() => coalesceNatsWrites({} as NatsConnection)).toThrow(/ProtocolHandler/);
  });
});
