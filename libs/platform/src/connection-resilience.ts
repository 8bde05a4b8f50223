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
