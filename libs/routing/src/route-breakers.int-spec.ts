/**
 * Breaker states travel between replicas over Redis pub/sub, which ignores the database number: a
 * deployment on database 12 and another on database 13 of the same Redis must not open each
 * other's breakers. Real Redis (see tools/jest/integration-setup.ts).
 */
import type { ResolvedRoute } from '@gateway/catalog';
import { randomUUID } from 'node:crypto';
import { RouteBreakers } from './route-breakers';
import { ROUTE_STATE_CHANNEL, routeStateChannel, RoutingRedis } from './routing-redis';

const redisOn = (database: number): RoutingRedis => new RoutingRedis({ mode: 'standalone', url: `redis://127.0.0.1:6379/${database}` });

const route = (label: string): ResolvedRoute =>
  ({
    adapter: 'simulator',
    upstream_model: 'x',
    label,
    priority: 0,
    weight: 1,
    hasQuota: false,
    breakerPolicy: { failures: 1, windowMs: 10_000, cooldownMs: 60_000 },
  }) as ResolvedRoute;

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!condition()) throw new Error(`${what} never happened`);
}

describe('route breakers shared over Redis pub/sub', () => {
  const connections = [redisOn(12), redisOn(12), redisOn(13), redisOn(13)];
  const [onTwelve, alsoOnTwelve, onThirteen, alsoOnThirteen] = connections.map((redis) => new RouteBreakers(redis));

  beforeAll(async () => {
    await Promise.all([onTwelve, alsoOnTwelve, onThirteen, alsoOnThirteen].map((breakers) => breakers.onModuleInit()));
  });
  afterAll(async () => {
    await Promise.all(connections.map((redis) => redis.onApplicationShutdown()));
  });

  it('names the channel after the database, database 0 keeping the name replicas used before', () => {
    expect(routeStateChannel(0)).toBe(ROUTE_STATE_CHANNEL);
    expect(connections[0].stateChannel).toBe(`${ROUTE_STATE_CHANNEL}:db12`);
    expect(connections[2].stateChannel).toBe(`${ROUTE_STATE_CHANNEL}:db13`);
  });

  it("a breaker opened on one database opens on that database's replicas only", async () => {
    const twelve = route(`twelve-${randomUUID()}`);
    expect(await onTwelve.failed(twelve, { kind: 'probe' })).toBe(true);
    await until(() => alsoOnTwelve.state(twelve.label) === 'open', 'the other replica on database 12 hearing of it');

    // Published after the first on the same Redis: once database 13's replica hears this one, it
    // has heard everything published on its channel before it.
    const thirteen = route(`thirteen-${randomUUID()}`);
    expect(await alsoOnThirteen.failed(thirteen, { kind: 'probe' })).toBe(true);
    await until(() => onThirteen.state(thirteen.label) === 'open', 'the other replica on database 13 hearing of its own');
    expect(onThirteen.state(twelve.label)).toBe('closed');
    expect(alsoOnTwelve.state(thirteen.label)).toBe('closed');
  });
});
