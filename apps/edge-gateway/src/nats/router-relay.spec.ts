import { EventEmitter } from 'node:events';
import { Rpc, TextFrame } from '@gateway/contracts';
import type { NatsRpcClient, ReceivedFrame } from '@gateway/platform';
import type { FastifyReply } from 'fastify';
import { TimeoutError } from 'rxjs';
import type { BudgetService } from '../billing/budget.service';
import type { UsageVoids } from '../billing/usage-voids';
import type { MeteredRequest } from '../admission/admission.guard';
import { EDGE_DISCONNECTED, LOST_REQUEST_GRACE_MS, ROUTER_GONE, ROUTER_RECONNECTED, type RouterProbes } from './router-liveness';
import { RelayEnding, RelayState, RouterRelay } from './router-relay';
import type { ServiceClient } from './service-client';

const SILENCE_MS = 100;
const IDLE_MS = 1_000;

/** A router on the other side of a fake NATS client: the test sends its frames. */
function harness({
  routerAlive = true,
  publishError,
  contract = Rpc.inferenceText,
}: { routerAlive?: boolean; publishError?: unknown; contract?: typeof Rpc.inferenceText | typeof Rpc.inferenceEmbeddings } = {}) {
  /** The frame handler of each sending of the request, in order (undefined once its exchange closed). */
  const sendings: (((frame: ReceivedFrame<TextFrame>) => void) | undefined)[] = [];
  const emitted: unknown[] = [];
  const client = {
    stream: (_contract: unknown, _payload: unknown, handler: (frame: ReceivedFrame<TextFrame>) => void) => {
      if (publishError) throw publishError;
      const index = sendings.push(handler) - 1;
      return { close: () => (sendings[index] = undefined) };
    },
    emit: (_contract: unknown, payload: unknown) => emitted.push(payload),
  } as unknown as NatsRpcClient;
  const probed: [string | undefined, string | undefined][] = [];
  const disconnectListeners: (() => void)[] = [];
  const serverLostListeners: (() => void)[] = [];
  const probes = {
    alive: async (router?: string, family?: string) => {
      probed.push([router, family]);
      return routerAlive;
    },
    onDisconnect: (listener: () => void) => disconnectListeners.push(listener),
    onServerLost: (listener: () => void) => serverLostListeners.push(listener),
  } as unknown as RouterProbes;
  const released: string[] = [];
  const budget = {
    claim: () => true,
    release: async (_principal: unknown, requestId: string) => void released.push(requestId),
  } as unknown as BudgetService;
  const services = { timeRequest: () => () => undefined } as unknown as ServiceClient;
  const voided: { requestId: string; model: unknown; route: string }[] = [];
  const voids = {
    void: (caller: { requestId: string }, model: unknown, route: string) => void voided.push({ requestId: caller.requestId, model, route }),
  } as unknown as UsageVoids;
  const raw = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false, headersSent: false });
  const reply = { raw } as unknown as FastifyReply;
  const relay = new RouterRelay(client, probes, budget, services, voids, { INFERENCE_IDLE_TIMEOUT_MS: IDLE_MS, INFERENCE_SILENCE_TIMEOUT_MS: SILENCE_MS });
  const request = { id: 'req-1', principal: { accountId: 'acct' }, ip: '127.0.0.1', headers: {} } as unknown as MeteredRequest;
  const frames: TextFrame[] = [];
  let ended: { ending: RelayEnding; state: RelayState } | undefined;
  const run = relay.open(
    contract as typeof Rpc.inferenceText,
    request,
    reply,
    { body: { model: 'm1' } } as never,
    { route: 'chat.completions' },
    {
      frame: (frame) => void frames.push(frame),
      ended: (ending, state) => (ended = { ending, state: { ...state } }),
    },
  );
  return {
    run,
    /** A frame of the latest sending. */
    send: (frame: ReceivedFrame<TextFrame>) => sendings.at(-1)?.(frame),
    sendings,
    /** The edge's own NATS connection loses its server. */
    disconnect: () => disconnectListeners.forEach((listener) => listener()),
    /** Another server of the NATS cluster goes away. */
    serverLost: () => serverLostListeners.forEach((listener) => listener()),
    emitted,
    released,
    voided,
    raw,
    frames,
    probed,
    ended: () => ended,
  };
}

const answer: TextFrame = { kind: 'sse', frames: ['data: hi\n\n'], router: 'r1' };

describe('RouterRelay', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('ends answered on the end frame: nothing cancelled, nothing released', () => {
    const relay = harness();
    relay.send(answer);
    relay.send({ kind: 'end' });
    expect(relay.frames).toEqual([answer]);
    expect(relay.ended()).toEqual({ ending: { kind: 'answered' }, state: expect.objectContaining({ phase: 'ended', frames: 1 }) });
    expect(relay.emitted).toEqual([]);
    expect(relay.released).toEqual([]);
    expect(relay.voided).toEqual([]);
  });

  it("ends on the router's error frame before any answer: the request abandoned, the reservation released", () => {
    const relay = harness();
    const error = { code: 'invalid_request', message: 'bad' };
    relay.send({ kind: 'heartbeat', router: 'r1' });
    relay.send({ kind: 'error', error });
    expect(relay.ended()?.ending).toEqual({ kind: 'router-error', error });
    expect(relay.emitted).toEqual([{ requestId: 'req-1', abandoned: true }]);
    expect(relay.released).toEqual(['req-1']);
    // The router's own answer, which it records as such: no void.
    expect(relay.voided).toEqual([]);
  });

  it('voids a request whose second sending ends in an error: the first may have been finished, its answer lost', () => {
    const relay = harness();
    relay.disconnect();
    expect(relay.sendings).toHaveLength(2);
    relay.send({ kind: 'error', error: { code: 'NO_RESPONDERS' } });
    expect(relay.ended()?.ending).toEqual({ kind: 'router-error', error: { code: 'NO_RESPONDERS' } });
    expect(relay.voided).toEqual([{ requestId: 'req-1', model: 'm1', route: 'chat.completions' }]);
  });

  it('ends router-gone when the router goes silent and its replica is gone', async () => {
    const relay = harness({ routerAlive: false });
    relay.send(answer);
    await jest.advanceTimersByTimeAsync(SILENCE_MS + 1);
    expect(relay.ended()?.ending).toEqual({ kind: 'router-gone', error: ROUTER_GONE });
    // It had answered: cancelled (not abandoned), and the usage event settles the reservation.
    expect(relay.emitted).toEqual([{ requestId: 'req-1' }]);
    expect(relay.released).toEqual([]);
    // Nothing had gone out to the client (a gathered answer): it gets an error status, so a void.
    expect(relay.voided).toHaveLength(1);
  });

  it('voids nothing once the answer has started to go out (headers sent): a cut stream is billed for what it relayed', async () => {
    const relay = harness({ routerAlive: false });
    relay.send(answer);
    relay.raw.headersSent = true;
    await jest.advanceTimersByTimeAsync(SILENCE_MS + 1);
    expect(relay.ended()?.ending).toEqual({ kind: 'router-gone', error: ROUTER_GONE });
    expect(relay.voided).toEqual([]);
  });

  it("ends router-error at once when no router serves the request's family (the NATS server's no responders)", () => {
    const relay = harness({ contract: Rpc.inferenceEmbeddings });
    relay.send({ kind: 'error', error: { code: 'NO_RESPONDERS' } });
    expect(relay.ended()?.ending).toEqual({ kind: 'router-error', error: { code: 'NO_RESPONDERS' } });
    expect(relay.probed).toEqual([]);
    expect(relay.released).toEqual(['req-1']);
  });

  it("probes the routers of the request's family while no replica has named itself, then the replica that did", async () => {
    const relay = harness({ contract: Rpc.inferenceEmbeddings });
    await jest.advanceTimersByTimeAsync(SILENCE_MS + 1);
    expect(relay.probed).toEqual([[undefined, 'embeddings']]);
    relay.send({ kind: 'heartbeat', router: 'r1' });
    await jest.advanceTimersByTimeAsync(SILENCE_MS + 1);
    expect(relay.probed.at(-1)).toEqual(['r1', 'embeddings']);
  });

  it('waits for a silent router that is still alive, and ends idle past the idle limit', async () => {
    const relay = harness({ routerAlive: true });
    relay.send({ kind: 'heartbeat', router: 'r1' });
    await jest.advanceTimersByTimeAsync(SILENCE_MS * 3);
    expect(relay.ended()).toBeUndefined();
    await jest.advanceTimersByTimeAsync(IDLE_MS);
    expect(relay.ended()?.ending).toEqual({ kind: 'idle', error: expect.any(TimeoutError) });
    expect(relay.emitted).toEqual([{ requestId: 'req-1', abandoned: true }]);
    expect(relay.released).toEqual(['req-1']);
  });

  it('ends router-gone at once when the router names itself anew mid-answer (it reconnected: frames may be lost), the frame after the gap not relayed', () => {
    const relay = harness();
    relay.send(answer);
    relay.send({ kind: 'heartbeat', router: 'r1' });
    expect(relay.ended()).toBeUndefined();
    relay.send({ kind: 'heartbeat', router: 'r1-renewed' });
    relay.send({ ...answer, router: undefined });
    expect(relay.ended()?.ending).toEqual({ kind: 'router-gone', error: ROUTER_RECONNECTED });
    expect(relay.frames).toEqual([answer]);
    expect(relay.emitted).toEqual([{ requestId: 'req-1' }]);
    expect(relay.sendings).toHaveLength(1);
  });

  it('sends a request again, once, when its answer may have been lost before any of it was relayed; the first sending is not heard any more', () => {
    const relay = harness();
    const first = relay.sendings[0]!;
    relay.send({ kind: 'heartbeat', router: 'r1' });
    relay.send({ ...answer, router: 'r1-renewed' });
    expect(relay.ended()).toBeUndefined();
    expect(relay.sendings).toHaveLength(2);
    expect(relay.sendings[0]).toBeUndefined();
    first({ kind: 'end' });
    expect(relay.ended()).toBeUndefined();
    // Nothing cancelled or released: the same request id is in flight again.
    expect(relay.emitted).toEqual([]);
    expect(relay.released).toEqual([]);

    relay.send(answer);
    relay.send({ kind: 'end' });
    expect(relay.frames).toEqual([answer]);
    expect(relay.ended()?.ending).toEqual({ kind: 'answered' });
  });

  it('ends the second time an answer is lost: a 503, the request abandoned, the reservation released', () => {
    const relay = harness();
    relay.disconnect();
    expect(relay.sendings).toHaveLength(2);
    relay.disconnect();
    expect(relay.ended()?.ending).toEqual({ kind: 'router-gone', error: EDGE_DISCONNECTED });
    expect(relay.emitted).toEqual([{ requestId: 'req-1', abandoned: true }]);
    expect(relay.released).toEqual(['req-1']);
    expect(relay.voided).toEqual([{ requestId: 'req-1', model: 'm1', route: 'chat.completions' }]);
  });

  it("ends a relay that is answering when the edge's own NATS connection loses its server", () => {
    const relay = harness();
    relay.send(answer);
    relay.disconnect();
    expect(relay.ended()?.ending).toEqual({ kind: 'router-gone', error: EDGE_DISCONNECTED });
    expect(relay.emitted).toEqual([{ requestId: 'req-1' }]);
    // Once ended, a later disconnect changes nothing.
    relay.disconnect();
    expect(relay.emitted).toHaveLength(1);
  });

  it('when a server of the cluster goes away: a request that hears nothing within the grace is sent again, one answering probes its router now', async () => {
    const silent = harness();
    silent.serverLost();
    await jest.advanceTimersByTimeAsync(LOST_REQUEST_GRACE_MS - 1);
    expect(silent.sendings).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(silent.sendings).toHaveLength(2);
    expect(silent.ended()).toBeUndefined();

    const heard = harness();
    heard.serverLost();
    heard.send({ kind: 'heartbeat', router: 'r1' });
    await jest.advanceTimersByTimeAsync(LOST_REQUEST_GRACE_MS);
    expect(heard.sendings).toHaveLength(1);

    const answering = harness({ routerAlive: true });
    answering.send(answer);
    answering.serverLost();
    await jest.advanceTimersByTimeAsync(0);
    expect(answering.probed).toEqual([['r1', 'text']]);
    expect(answering.ended()).toBeUndefined();

    const gone = harness({ routerAlive: false });
    gone.send(answer);
    gone.serverLost();
    await jest.advanceTimersByTimeAsync(0);
    expect(gone.ended()?.ending).toEqual({ kind: 'router-gone', error: ROUTER_GONE });
  });

  it('ends client-gone when the response closes first: cancelled, the reservation left to the usage event', () => {
    const relay = harness();
    relay.raw.emit('close');
    relay.send(answer);
    expect(relay.ended()?.ending).toEqual({ kind: 'client-gone' });
    expect(relay.frames).toEqual([]);
    expect(relay.emitted).toEqual([{ requestId: 'req-1' }]);
    expect(relay.released).toEqual([]);
    expect(relay.voided).toEqual([]);
  });

  it("ends too-large when the request exceeds the NATS server's max_payload: never sent, the reservation released", () => {
    const error = Object.assign(new Error('MAX_PAYLOAD_EXCEEDED'), { code: 'MAX_PAYLOAD_EXCEEDED' });
    const relay = harness({ publishError: error });
    expect(relay.ended()?.ending).toEqual({ kind: 'too-large', error });
    expect(relay.run.state.phase).toBe('ended');
    expect(relay.released).toEqual(['req-1']);
    // Never sent: the router never heard of it, nothing to void.
    expect(relay.voided).toEqual([]);
  });
});
