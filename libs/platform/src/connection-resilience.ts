import type { ConnectionOptions, NatsConnection } from 'nats';
import type { RedisOptions } from 'ioredis';

/**
 * NATS clients never give up reconnecting: nats.js stops after 10 attempts (~20 s) by default and
 * then closes the connection for good, which left every process alive but useless after a longer
 * outage. Jitter spreads the reconnects of many replicas.
 */
export const NATS_RECONNECT_OPTIONS = {
  maxReconnectAttempts: -1,
  reconnectTimeWait: 1_000,
  reconnectJitter: 500,
  pingInterval: 10_000,
  maxPingOut: 2,
} satisfies Partial<ConnectionOptions>;

/** Backoff between Redis reconnects: 100 ms growing to at most 2 s, forever. */
export function redisRetryDelay(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt, 5), 2_000);
}

/**
 * ioredis reconnects forever with these. A command issued while the connection is down waits in
 * the offline queue for at most `maxRetriesPerRequest` reconnects and then fails (mapped to 503), so
 * a request never hangs for the length of the outage.
 */
export const REDIS_RECONNECT_OPTIONS = {
  retryStrategy: redisRetryDelay,
  maxRetriesPerRequest: 2,
  enableOfflineQueue: true,
  connectTimeout: 2_000,
} satisfies RedisOptions;

/** A connection whose death should make the process fail its liveness probe (so it is restarted). */
export interface LivenessCheck {
  name: string;
  alive(): boolean;
}

const livenessChecks = new Map<string, () => boolean>();

/**
 * Registers a check; `/healthz` answers 503 while one fails. Only a connection closed for good
 * counts, never one that is reconnecting: an outage of a dependency must not restart every pod.
 */
export function registerLivenessCheck(name: string, alive: () => boolean): void {
  livenessChecks.set(name, alive);
}

export function natsLivenessCheck(name: string, connection: NatsConnection): void {
  registerLivenessCheck(name, () => !connection.isClosed());
}

/** Names of the connections closed for good; empty while the process is alive. */
export function deadConnections(): string[] {
  return [...livenessChecks].filter(([, alive]) => !safely(alive)).map(([name]) => name);
}

function safely(alive: () => boolean): boolean {
  try {
    return alive();
  } catch {
    return false;
  }
}

const UNAVAILABLE_CODES = new Set([
  // Socket errors (pg, ioredis, fetch to a local service)
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  // nats.js
  'CONNECTION_CLOSED',
  'CONNECTION_DRAINING',
  'CONNECTION_REFUSED',
  'DISCONNECT',
  'NO_RESPONDERS',
  '503',
  // Prisma: database unreachable, timed out, connection closed, pool timeout
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2024',
]);

const UNAVAILABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'PrismaClientInitializationError', 'ClusterAllFailedError']);

const UNAVAILABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout']);

const UNAVAILABLE_MESSAGES = [
  /^Connection is closed\.?$/,
  /Stream isn't writeable/,
  /Connection lost\. Trying to reconnect/,
  /Connection terminated/,
  /timeout exceeded when trying to connect/,
  /Can't reach database server/,
  // Redis failing over: a Cluster's slot without a master yet (or moving), a Sentinel-managed master
  // demoted under the client, a replica still loading its data set.
  /^Too many Cluster redirections/,
  /^CLUSTERDOWN/,
  /^TRYAGAIN/,
  /^Failed to refresh slots cache/,
  /^None of startup nodes is available/,
  /^All sentinels are unreachable/,
  /^READONLY /,
  /^LOADING /,
  /^MASTERDOWN /,
];

/**
 * A failure caused by a back-end being unreachable (Redis, NATS, PostgreSQL), not by the request:
 * callers map it to 503 `service_unavailable` so clients retry, rather than 500. Follows `cause`
 * chains, since drivers wrap the socket error (Prisma's adapter error around pg's ECONNREFUSED).
 */
export function isDependencyUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 5 || error === null || error === undefined) return false;
  // Nest's NATS client rejects with a bare string while it reconnects.
  if (typeof error === 'string') return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(error));
  if (typeof error !== 'object') return false;
  const { code, name, message, kind, cause } = error as { code?: unknown; name?: unknown; message?: unknown; kind?: unknown; cause?: unknown };
  if (code !== undefined && UNAVAILABLE_CODES.has(String(code))) return true;
  if (typeof name === 'string' && UNAVAILABLE_NAMES.has(name)) return true;
  if (typeof kind === 'string' && UNAVAILABLE_KINDS.has(kind)) return true;
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
  return isDependencyUnavailable(cause, depth + 1);
}

/** Seconds a client is told to wait (`Retry-After`) when a back-end is unavailable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;
