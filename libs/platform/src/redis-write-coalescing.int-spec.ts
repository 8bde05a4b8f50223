import { Redis } from 'ioredis';
import type { Writable } from 'node:stream';
import { coalesceRedisWrites } from './redis-write-coalescing';

const REDIS_URL = `redis://127.0.0.1:6379/${process.env.TEST_REDIS_DB ?? '13'}`;

/** How many times the client's current socket hands bytes to the kernel (one `_write` or `_writev` each). */
function countWrites(client: Redis): { count: number } {
  const stream = (client as unknown as { stream: Writable & { _write: (...args: unknown[]) => void; _writev?: (...args: unknown[]) => void } }).stream;
  const counter = { count: 0 };
  for (const method of ['_write', '_writev'] as const) {
    const original = stream[method];
    if (!original) continue;
    stream[method] = function (this: Writable, ...args: unknown[]) {
      counter.count++;
      return original.apply(this, args);
    };
  }
  return counter;
}

/** Sends `count` INCRs, each from a timer callback of its own, all due in the same turn; resolves with the replies in the order they came. */
async function incrFromTimers(client: Redis, key: string, count: number): Promise<number[]> {
  const replies: number[] = [];
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve, reject) =>
          setTimeout(() => {
            client.incr(key).then((value) => {
              replies.push(value);
              resolve();
            }, reject);
          }, 0),
        ),
    ),
  );
  return replies;
}

/**
 * Coalesced Redis writes against a real Redis: commands sent from many callbacks of one event-loop
 * turn (as an edge admits requests that arrived together) leave in one write and are all answered,
 * in order; a lone command is not held back; a reconnect's new socket is coalesced too.
 */
describe('coalesceRedisWrites (real Redis)', () => {
  const clients: Redis[] = [];
  const open = async (coalesce: boolean) => {
    const client = new Redis(REDIS_URL, { lazyConnect: true });
    clients.push(client);
    if (coalesce) coalesceRedisWrites(client);
    await client.connect();
    return client;
  };
  const key = (name: string) => `test:coalesce:${process.pid}:${name}`;

  afterAll(async () => {
    const [first] = clients;
    if (first) await first.del(key('plain'), key('coalesced'), key('reconnect'), key('lone'));
    await Promise.all(clients.map((client) => client.quit().catch(() => undefined)));
  });

  it('sends the commands of one turn’s callbacks in one write, all answered in order', async () => {
    const plain = await open(false);
    const coalesced = await open(true);
    const plainWrites = countWrites(plain);
    const coalescedWrites = countWrites(coalesced);

    expect(await incrFromTimers(plain, key('plain'), 200)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(await incrFromTimers(coalesced, key('coalesced'), 200)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));

    // ioredis alone: one write per command. Coalesced: the timers' commands leave together.
    expect(plainWrites.count).toBe(200);
    expect(coalescedWrites.count).toBeLessThanOrEqual(5);
  });

  it('answers a lone command, and a script, as before', async () => {
    const client = await open(true);
    await expect(client.set(key('lone'), 'x')).resolves.toBe('OK');
    await expect(client.eval('return redis.call("GET", KEYS[1])', 1, key('lone'))).resolves.toBe('x');
  });

  it('coalesces the socket of a reconnection too', async () => {
    const client = await open(true);
    const before = (client as unknown as { stream: Writable }).stream;
    const ready = new Promise<void>((resolve) => client.once('ready', () => resolve()));
    client.disconnect(true);
    await ready;
    expect((client as unknown as { stream: Writable }).stream).not.toBe(before);
    const writes = countWrites(client);
    expect(await incrFromTimers(client, key('reconnect'), 50)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(writes.count).toBeLessThanOrEqual(5);
  });
});
