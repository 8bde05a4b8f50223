import { IsString } from 'class-validator';
import { BaseEnv } from './base-env';
import { parseEnv } from './config';
import { isDependencyUnavailable } from './connection-resilience';
import { bullPrefix, redisDatabaseOf, redisTopology, WithRedisTopology } from './redis-topology';

class Env extends WithRedisTopology(BaseEnv) {
  @IsString()
  REDIS_URL = 'redis://127.0.0.1:6379';
}

describe('Redis topology from the environment', () => {
  it("knows the database its clients select: the URL's path, 0 without one and on a cluster", () => {
    expect(redisDatabaseOf({ mode: 'standalone', url: 'redis://127.0.0.1:6379/12' })).toBe(12);
    expect(redisDatabaseOf({ mode: 'standalone', url: 'redis://127.0.0.1:6379' })).toBe(0);
    expect(redisDatabaseOf({ mode: 'sentinel', sentinels: [], name: 'm', url: 'redis://:secret@x/3' })).toBe(3);
    expect(redisDatabaseOf({ mode: 'cluster', nodes: [], url: 'redis://127.0.0.1:6379/5' })).toBe(0);
  });

  it('is the one server of REDIS_URL by default', () => {
    expect(redisTopology(parseEnv(Env, {}))).toEqual({ mode: 'standalone', url: 'redis://127.0.0.1:6379' });
  });

  it('is a cluster with REDIS_CLUSTER_NODES, REDIS_URL giving only credentials', () => {
    const env = parseEnv(Env, { REDIS_CLUSTER_NODES: 'redis-0:6379, redis-1:6380,[::1]:7000', REDIS_URL: 'rediss://u:p@ignored:1' });
    expect(redisTopology(env)).toEqual({
      mode: 'cluster',
      nodes: [
        { host: 'redis-0', port: 6379 },
        { host: 'redis-1', port: 6380 },
        { host: '::1', port: 7000 },
      ],
      url: 'rediss://u:p@ignored:1',
    });
  });

  it('is a Sentinel-managed master with REDIS_SENTINELS and REDIS_SENTINEL_NAME', () => {
    const env = parseEnv(Env, { REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_NAME: 'gateway' });
    expect(redisTopology(env)).toMatchObject({
      mode: 'sentinel',
      name: 'gateway',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
    });
  });

  it('refuses, naming the variable, a malformed node list, sentinels without a name, and both set-ups at once', () => {
    expect(() => parseEnv(Env, { REDIS_CLUSTER_NODES: 'redis-0' })).toThrow(/REDIS_CLUSTER_NODES must be a comma-separated list of host:port/);
    expect(() => parseEnv(Env, { REDIS_CLUSTER_NODES: 'redis-0:99999' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => parseEnv(Env, { REDIS_SENTINELS: 's1:26379' })).toThrow(/REDIS_SENTINEL_NAME is required with REDIS_SENTINELS/);
    expect(() => parseEnv(Env, { REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'g', REDIS_CLUSTER_NODES: 'r:1' })).toThrow(/both set/);
  });

  it("hash-tags BullMQ's keys on a cluster only (queues of earlier releases keep their prefix elsewhere)", () => {
    expect(bullPrefix({ mode: 'cluster', nodes: [], url: 'redis://x' })).toBe('{bull}');
    expect(bullPrefix({ mode: 'standalone', url: 'redis://x' })).toBe('bull');
  });
});

describe('Redis failing over counts as unavailable (503 with Retry-After, not 500)', () => {
  it.each([
    'Too many Cluster redirections. Last error: Error: Connection is closed.',
    'CLUSTERDOWN The cluster is down',
    'TRYAGAIN Multiple keys request during rehashing of slot',
    "READONLY You can't write against a read only replica.",
    'LOADING Redis is loading the dataset in memory',
    'All sentinels are unreachable. Retrying from scratch after 10ms.',
  ])('%s', (message) => {
    expect(isDependencyUnavailable(new Error(message))).toBe(true);
  });

  it('but not a script error', () => {
    expect(isDependencyUnavailable(new Error('ERR Error running script: attempt to compare nil with number'))).toBe(false);
  });
});
