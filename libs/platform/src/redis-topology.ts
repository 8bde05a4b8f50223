import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import { redisRetryDelay } from './connection-resilience';
import { IsString, Validate, ValidationArguments, ValidatorConstraint, ValidatorConstraintInterface } from 'class-validator';

const HOST_PORT = /^(\[[^\]]+\]|[^:\s,[\]]+):(\d{1,5})$/;

/** `host:port,host:port` (empty allowed: the variable is unset). */
@ValidatorConstraint({ name: 'redisNodeList' })
class RedisNodeList implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (value === '' || value === undefined) return true;
    return (
      typeof value === 'string' &&
      value.split(',').every((entry) => {
        const match = HOST_PORT.exec(entry.trim());
        return match !== null && Number(match[2]) >= 1 && Number(match[2]) <= 65535;
      })
    );
  }

  defaultMessage({ property }: ValidationArguments): string {
    return `${property} must be a comma-separated list of host:port`;
  }
}

/** The sentinels need the master's name, and a cluster and sentinels exclude each other. */
@ValidatorConstraint({ name: 'redisSentinelName' })
class RedisSentinelName implements ValidatorConstraintInterface {
  validate(value: unknown, { object }: ValidationArguments): boolean {
    const env = object as Partial<RedisEnv>;
    if (!env.REDIS_SENTINELS) return true;
    return Boolean(value) && !env.REDIS_CLUSTER_NODES;
  }

  defaultMessage({ object }: ValidationArguments): string {
    return (object as Partial<RedisEnv>).REDIS_CLUSTER_NODES
      ? 'REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set: choose a Redis Cluster or Sentinel'
      : 'REDIS_SENTINEL_NAME is required with REDIS_SENTINELS (the name the sentinels monitor the master under)';
  }
}

/** The Redis variables every Redis-using app reads (REDIS_URL is declared by each app, with its own default). */
export interface RedisEnv {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES: string;
  REDIS_SENTINELS: string;
  REDIS_SENTINEL_NAME: string;
}

type EnvClass = new (...args: any[]) => object;

/**
 * Adds the Redis topology variables to an app's environment class: `class EdgeEnv extends
 * WithRedisTopology(BaseEnv)`. See `redisTopology` for how they combine.
 */
export function WithRedisTopology<TBase extends EnvClass>(Base: TBase) {
  class RedisTopologyEnv extends Base {
    /** A Redis Cluster's nodes (any of them; the rest are discovered): `host:port,…`. */
    @Validate(RedisNodeList)
    REDIS_CLUSTER_NODES = '';

    /** Sentinels watching the master (`host:port,…`); with REDIS_SENTINEL_NAME. */
    @Validate(RedisNodeList)
    REDIS_SENTINELS = '';

    @IsString()
    @Validate(RedisSentinelName)
    REDIS_SENTINEL_NAME = '';
  }
  return RedisTopologyEnv;
}

export interface HostPort {
  host: string;
  port: number;
}

/**
 * Which Redis the app talks to, chosen by configuration: a Redis Cluster (`REDIS_CLUSTER_NODES`), a
 * master found through Sentinel (`REDIS_SENTINELS` + `REDIS_SENTINEL_NAME`), else the one server of
 * `REDIS_URL`. In the first two, `REDIS_URL` still gives the credentials and TLS (`rediss://`) of the
 * data nodes (and, for Sentinel, the database number); its host is not used.
 */
export type RedisTopology =
  | { mode: 'standalone'; url: string }
  | { mode: 'cluster'; nodes: HostPort[]; url: string }
  | { mode: 'sentinel'; sentinels: HostPort[]; name: string; url: string };

export type RedisClient = Redis | Cluster;

/** The token of the app's RedisTopology (the edge's budget store, metering's settlement, the video queue). */
export const REDIS_TOPOLOGY = Symbol('REDIS_TOPOLOGY');

export const isCluster = (client: RedisClient): client is Cluster => (client as Cluster).isCluster === true;

/** A validated `host:port,…` list (RedisNodeList) as objects. */
function hostPorts(list: string): HostPort[] {
  return list
    .split(',')
    .map((entry) => HOST_PORT.exec(entry.trim()))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) }));
}

/** The topology an environment (validated by WithRedisTopology) names. */
export function redisTopology(env: RedisEnv): RedisTopology {
  if (env.REDIS_CLUSTER_NODES) return { mode: 'cluster', nodes: hostPorts(env.REDIS_CLUSTER_NODES), url: env.REDIS_URL };
  if (env.REDIS_SENTINELS) return { mode: 'sentinel', sentinels: hostPorts(env.REDIS_SENTINELS), name: env.REDIS_SENTINEL_NAME, url: env.REDIS_URL };
  return { mode: 'standalone', url: env.REDIS_URL };
}

/** What REDIS_URL says besides its host: the credentials and TLS of the data nodes, and the database. */
function urlOptions(url: string): { credentials: RedisOptions; db: number } {
  const parsed = new URL(url);
  const db = Number(parsed.pathname.replace(/^\//, '') || '0');
  const credentials = {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  return { credentials, db: Number.isInteger(db) ? db : 0 };
}

/**
 * The database number the topology's clients use (the URL's path; a cluster has only 0). Keys are
 * per database, but pub/sub channels are not: a channel shared by deployments on one Redis must
 * carry it in its name.
 */
export function redisDatabaseOf(topology: RedisTopology): number {
  return topology.mode === 'cluster' ? 0 : urlOptions(topology.url).db;
}

/**
 * One client for the topology. `options` are the per-connection options (retry strategy, offline
 * queue, timeouts); on a cluster they apply to each node's connection, and the cluster itself
 * retries a command through a failover (MOVED, TRYAGAIN, CLUSTERDOWN) for about as long as the
 * caller's `maxRetriesPerRequest` allows before failing it (then answered 503 with Retry-After).
 */
export function createRedisClient(topology: RedisTopology, options: RedisOptions = {}): RedisClient {
  if (topology.mode === 'standalone') return new Redis(topology.url, options);
  const { credentials, db } = urlOptions(topology.url);
  if (topology.mode === 'sentinel') {
    return new Redis({
      ...credentials,
      db,
      ...options,
      sentinels: topology.sentinels,
      name: topology.name,
      // Subscribes to the sentinels' +switch-master, so a failover is seen at once rather than at
      // the next failed command.
      failoverDetector: true,
      sentinelRetryStrategy: (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), 2_000),
    });
  }
  // A cluster has database 0 only: a database number in REDIS_URL is ignored (docs/configuration.md).
  const clusterOptions: ClusterOptions = {
    redisOptions: { ...credentials, ...withoutNodeOnly(options) },
    enableOfflineQueue: options.enableOfflineQueue ?? true,
    clusterRetryStrategy: (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), 2_000),
    // A failover: the dead master's slots answer CLUSTERDOWN (or the connection fails) until a
    // replica is promoted. ioredis refreshes the slot map and retries, `maxRedirections` times.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 100,
    maxRedirections: 8,
    slotsRefreshTimeout: 2_000,
    slotsRefreshInterval: 5_000,
    scaleReads: 'master',
  };
  return new Cluster(topology.nodes, clusterOptions);
}

/** The options a cluster sets for itself rather than per node. */
function withoutNodeOnly(options: RedisOptions): NonNullable<ClusterOptions['redisOptions']> {
  const perNode = { ...options };
  delete perNode.retryStrategy;
  delete perNode.enableOfflineQueue;
  return perNode;
}

/**
 * BullMQ's queue keys. On a cluster, one hash tag keeps every key of the queue in one slot (BullMQ's
 * scripts touch several); elsewhere the default prefix, so queues of earlier releases are kept.
 */
export const bullPrefix = (topology: RedisTopology): string => (topology.mode === 'cluster' ? '{bull}' : 'bull');

/** The topology as one line for logs (no credentials). */
export function describeTopology(topology: RedisTopology): string {
  const list = (nodes: HostPort[]) => nodes.map(({ host, port }) => `${host}:${port}`).join(',');
  if (topology.mode === 'cluster') return `Redis Cluster ${list(topology.nodes)}`;
  if (topology.mode === 'sentinel') return `Redis master '${topology.name}' via sentinels ${list(topology.sentinels)}`;
  const url = new URL(topology.url);
  return `Redis ${url.host}${url.pathname}`;
}

/**
 * A BullMQ Worker's or QueueEvents' own connection (they block on it, so it is not shared): no
 * per-command retry limit, as BullMQ requires. The caller closes it after the worker or reader.
 */
export function createBullConnection(topology: RedisTopology): RedisClient {
  return createRedisClient(topology, { maxRetriesPerRequest: null, retryStrategy: redisRetryDelay, enableOfflineQueue: true });
}
