import type { JetStreamManager, ServerInfo, StreamConfig, StreamInfo } from 'nats';

/**
 * Copies of each of the gateway's streams on a NATS cluster: with three, losing one server loses no
 * event, and the two left are still a majority, so the stream stays writable.
 */
export const CLUSTER_STREAM_REPLICAS = 3;

/** The JetStream API's refusals of a replica count the cluster cannot place. */
const CANNOT_PLACE = new Set([
  10005, // no suitable peers for placement (fewer JetStream servers than replicas)
  10023, // insufficient resources
  10074, // replicas > 1 not supported in non-clustered mode
]);
const STREAM_NOT_FOUND = 10059;

/** What the gateway's services declare of a stream; the replica count is theirs to decide. */
export type StreamDefinition = Pick<StreamConfig, 'name' | 'subjects' | 'retention' | 'storage' | 'duplicate_window'>;

export interface StreamLog {
  log(line: string): void;
  warn(line: string): void;
}

/** How long a new stream waits for a forming cluster to place its copies, and how often it asks. */
const PLACEMENT_WAIT_MS = 30_000;
const PLACEMENT_RETRY_MS = 500;

/** How many copies to ask of each stream, and whether a stream with fewer may be scaled up where it is. */
export interface ReplicaPolicy {
  replicas: number;
  scaleUp: boolean;
  /**
   * How long a new stream's copies are asked for again while the cluster cannot place them (its
   * servers still forming their JetStream group, every one started at once) before it is made with
   * one. 0: at once.
   */
  placementWaitMs?: number;
  /** The NATS server's version, for the log lines. */
  serverVersion?: string;
}

/**
 * The policy on the NATS deployment behind `info` (the server a connection is on): 3 copies when
 * that server is part of a cluster, 1 on a lone server. A cluster that cannot place three copies
 * (fewer than three JetStream servers) refuses, and `ensureStream` then settles for one.
 *
 * Scaling an existing stream up is left to nats-server 2.10 and later: on 2.9.10 (Debian 12's
 * package) the durable consumers scaled with it keep a replica on their first server whose raft log
 * never catches up once that server restarts (it logs "Error storing entry to WAL" and its
 * `/healthz` stays 503); the raft-log fixes of 2.9.14 to 2.9.16 (nats-server #3893, #3911) address
 * this, and 2.10 is the first line that has them all.
 */
export function replicaPolicy(info: Partial<Pick<ServerInfo, 'cluster' | 'version'>> | undefined): ReplicaPolicy {
  const [major = 0, minor = 0] = (info?.version ?? '').split('.').map(Number);
  return {
    replicas: info?.cluster ? CLUSTER_STREAM_REPLICAS : 1,
    scaleUp: major > 2 || (major === 2 && minor >= 10),
    placementWaitMs: info?.cluster ? PLACEMENT_WAIT_MS : 0,
    serverVersion: info?.version,
  };
}

/**
 * Makes sure `definition`'s stream exists with `policy.replicas` copies, or as many as the cluster
 * can place: creates it when missing (two services racing to create it both succeed), and scales an
 * existing stream with fewer copies up (a single server that became a cluster) where the policy
 * allows, else warns how to do it by hand. It never scales a stream down: a cluster with a server
 * missing keeps its R3 streams, and an operator's higher count stays. Durable consumers that do not
 * set their own count (metering's) have their stream's. Resolves with the stream's replica count;
 * rejects only when the stream does not exist afterwards.
 */
export async function ensureStream(manager: JetStreamManager, definition: StreamDefinition, policy: ReplicaPolicy, log: StreamLog): Promise<number> {
  const { replicas } = policy;
  const info = await streamInfo(manager, definition.name);
  // Created with fewer copies only when the cluster refused more: asking again now would be refused too.
  if (!info) return (await create(manager, definition, replicas, log, Date.now() + (policy.placementWaitMs ?? 0))).config.num_replicas || 1;
  const current = info.config.num_replicas || 1;
  if (current >= replicas) return current;
  if (!policy.scaleUp) {
    log.warn(
      `JetStream stream ${definition.name} has ${current} replica(s) on a NATS cluster: nats-server ${policy.serverVersion ?? '(unknown version)'} ` +
        `cannot scale its consumers up safely, so it stays so; see "NATS cluster" in docs/operations.md`,
    );
    return current;
  }
  try {
    const scaled = await manager.streams.update(definition.name, { ...info.config, num_replicas: replicas });
    log.log(`scaled JetStream stream ${definition.name} from ${current} to ${scaled.config.num_replicas} replicas`);
    return scaled.config.num_replicas;
  } catch (error) {
    // A cluster of fewer servers than replicas refuses every time: said at the start, not as a warning.
    if (cannotPlace(error)) log.log(`JetStream stream ${definition.name} stays at ${current} replica(s): ${(error as Error).message}`);
    else log.warn(`JetStream stream ${definition.name} not scaled to ${replicas} replicas: ${(error as Error).message}`);
    return current;
  }
}

/** Creates the stream and resolves with its info (another service's, when that one was first). */
async function create(manager: JetStreamManager, definition: StreamDefinition, replicas: number, log: StreamLog, placeUntil = 0): Promise<StreamInfo> {
  try {
    const created = await manager.streams.add({ ...definition, num_replicas: replicas });
    log.log(`created JetStream stream ${definition.name} with ${created.config.num_replicas} replica(s)`);
    return created;
  } catch (error) {
    if (replicas > 1 && cannotPlace(error)) {
      if (Date.now() < placeUntil) {
        // A forming cluster places them a moment later; a cluster of two never does.
        await new Promise((resolve) => setTimeout(resolve, PLACEMENT_RETRY_MS));
        return create(manager, definition, replicas, log, placeUntil);
      }
      log.log(`JetStream stream ${definition.name}: ${replicas} replicas cannot be placed (${(error as Error).message}); creating it with 1`);
      return create(manager, definition, 1, log);
    }
    // Another service created it meanwhile: the add fails, and the stream is there.
    const existing = await streamInfo(manager, definition.name).catch(() => undefined);
    if (existing) return existing;
    throw error;
  }
}

/** The stream's info, or undefined when it does not exist; rejects when JetStream cannot be asked. */
async function streamInfo(manager: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await manager.streams.info(name);
  } catch (error) {
    if (apiErrorCode(error) === STREAM_NOT_FOUND) return undefined;
    throw error;
  }
}

function cannotPlace(error: unknown): boolean {
  const code = apiErrorCode(error);
  return code !== undefined && CANNOT_PLACE.has(code);
}

function apiErrorCode(error: unknown): number | undefined {
  return (error as { api_error?: { err_code?: number } } | undefined)?.api_error?.err_code;
}
