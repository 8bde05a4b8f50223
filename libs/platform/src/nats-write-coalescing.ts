import type { NatsConnection } from 'nats';

/** The parts of nats.js's ProtocolHandler (nats 2.x, `nc.protocol`) the coalescing replaces or uses. */
interface ProtocolInternals {
  outbound: { size(): number; fill(buffer: Uint8Array, ...payloads: Uint8Array[]): void };
  pendingLimit: number;
  flushPending(): void;
  sendCommand(command: string | Uint8Array, ...payloads: Uint8Array[]): void;
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/** Per coalesced connection: what runs right before its next write (see `beforeNextWrite`). */
interface WriteHooks {
  queue(task: () => void, bytes: number): void;
  grew(bytes: number): void;
}

const writeHooks = new WeakMap<NatsConnection, WriteHooks>();

/**
 * Runs `task` right before `connection` next writes what it has buffered (the coalesced flush of
 * this turn, scheduled now if none is), so a publish the task makes leaves in that same write: a
 * sender can hold what it may still add to until the last moment that costs no delay. `bytes` is
 * the size of what the sender holds for it (`heldGrew` when that grows; a string's length will do,
 * it only decides when to write early): once the connection's held and buffered bytes reach its
 * flush threshold (nats.js's 32 KiB), the tasks run and the write happens
 * at once, as a buffer that full would be written anyway, so a long turn's output keeps leaving
 * while the turn runs instead of all at its end. False when the connection's writes are not
 * coalesced (the task is not queued: the caller sends now).
 */
export function beforeNextWrite(connection: NatsConnection, task: () => void, bytes: number): boolean {
  const hooks = writeHooks.get(connection);
  if (!hooks) return false;
  hooks.queue(task, bytes);
  return true;
}

/** What a sender holds for a queued `beforeNextWrite` task grew by `bytes` (see there). */
export function heldGrew(connection: NatsConnection, bytes: number): void {
  writeHooks.get(connection)?.grew(bytes);
}

/**
 * Makes a NATS connection write what it has to send once per turn of the event loop instead of once
 * per callback. nats.js flushes its outbound buffer in a microtask, so the frames of one I/O
 * callback share a write but every callback makes its own system call: a router relaying 12,000
 * stream chunks a second from as many upstream reads wrote 12,000 times. Here the flush waits for
 * `setImmediate`, which runs after the poll phase has handled every socket that was ready, so all
 * the frames those callbacks published leave in one write. A quiet process loses nothing: with one
 * callback in the phase, the write follows it at once. The buffer's size limit still flushes inline.
 *
 * It replaces `sendCommand` of the connection's protocol handler, which outlives reconnections, and
 * flushes before `close`.
 * Throws when that handler is not the shape this was written for (a nats.js upgrade changed it), so
 * an upgrade cannot silently drop it.
 */
export function coalesceNatsWrites<C extends NatsConnection>(connection: C): C {
  const protocol = (connection as unknown as { protocol?: Partial<ProtocolInternals> }).protocol;
  if (
    typeof protocol?.sendCommand !== 'function' ||
    typeof protocol.flushPending !== 'function' ||
    typeof protocol.outbound?.fill !== 'function' ||
    typeof protocol.outbound.size !== 'function' ||
    typeof protocol.pendingLimit !== 'number' ||
    typeof protocol.close !== 'function'
  ) {
    throw new Error('coalesceNatsWrites: this nats.js has no ProtocolHandler {outbound, pendingLimit, flushPending, sendCommand, close} to coalesce');
  }
  const handler = protocol as ProtocolInternals;
  let scheduled = false;
  /** Tasks to run before the next flush (`beforeNextWrite`); their publishes join it. */
  let tasks: (() => void)[] = [];
  /**
   * What the senders of those tasks hold, as they said. A sender that sends early (its stream's next
   * frame is not raw) does not say so: until the next flush this may count more than is held, which
   * only makes the early write come sooner.
   */
  let heldBytes = 0;
  let runningTasks = false;
  const runTasks = () => {
    runningTasks = true;
    try {
      while (tasks.length > 0) {
        const due = tasks;
        tasks = [];
        for (const task of due) task();
      }
    } finally {
      runningTasks = false;
      // What was held, and what was queued or grew while the tasks ran, leaves in this write.
      heldBytes = 0;
    }
  };
  const flush = () => {
    scheduled = false;
    try {
      runTasks();
    } finally {
      handler.flushPending();
    }
  };
  const schedule = () => {
    if (scheduled || runningTasks) return;
    scheduled = true;
    setImmediate(flush);
  };
  handler.sendCommand = (command, ...payloads) => {
    handler.outbound.fill(typeof command === 'string' ? encoder.encode(command) : command, ...payloads);
    if (handler.outbound.size() >= handler.pendingLimit) handler.flushPending();
    else schedule();
  };
  /** The held and buffered bytes reached the flush threshold: everything leaves now, as a full buffer would. */
  const flushWhenFull = () => {
    if (runningTasks || heldBytes + handler.outbound.size() < handler.pendingLimit) return;
    runTasks();
    handler.flushPending();
  };
  writeHooks.set(connection, {
    queue: (task, bytes) => {
      tasks.push(task);
      heldBytes += bytes;
      schedule();
      flushWhenFull();
    },
    grew: (bytes) => {
      heldBytes += bytes;
      flushWhenFull();
    },
  });
  // What was published (or held for the next write) just before a close still leaves (the flush would come after the socket closed).
  const close = handler.close.bind(handler);
  handler.close = () => {
    runTasks();
    handler.flushPending();
    return close();
  };
  return connection;
}
