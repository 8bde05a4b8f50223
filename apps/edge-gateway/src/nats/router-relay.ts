import { Inject, Injectable } from '@nestjs/common';
import { HeartbeatFrame, ReplyOf, RequestOf, Rpc, StreamContract } from '@gateway/contracts';
import { NatsRpcClient, ReceivedFrame, ReplyExchange } from '@gateway/platform';
import type { FastifyReply } from 'fastify';
import { TimeoutError } from 'rxjs';
import { BudgetService } from '../billing/budget.service';
import { UsageVoids } from '../billing/usage-voids';
import { callerContext } from '../auth/caller-context';
import { MeteredRequest } from '../admission/admission.guard';
import { MeteredRelay } from '../policy/metering.decorators';
import { ServiceClient } from './service-client';
import { EDGE_DISCONNECTED, REQUEST_LOST, ROUTER_RECONNECTED, RouterProbes, RouterWatch, RouterWatchLimits } from './router-liveness';
import { EdgeEnv } from '../config/edge.env';
import { isNatsPayloadTooLarge } from '../errors/to-http-error';

/** How a relay ended. */
export type RelayEnding =
  /** The router's end frame, or the caller's `finish()` after the last answer frame. */
  | { kind: 'answered' }
  /** The router's error frame, no router subscribed, or a frame that is neither JSON nor raw. */
  | { kind: 'router-error'; error: unknown }
  /** Silence, and the probe found the router's replica (or every router) gone: `ROUTER_GONE` or a `TimeoutError`. */
  | { kind: 'router-gone'; error: unknown }
  /** No answer frame within the idle limit, the router alive all along (a `TimeoutError`). */
  | { kind: 'idle'; error: TimeoutError }
  /** The request is larger than the NATS server's max_payload: never sent. */
  | { kind: 'too-large'; error: unknown }
  /** Not sent: the connection is closed. */
  | { kind: 'not-sent'; error: unknown }
  /** The client closed the connection first. */
  | { kind: 'client-gone' };

export type RelayFailure = Exclude<RelayEnding, { kind: 'answered' } | { kind: 'client-gone' }>;

/**
 * A relay's state, as one object: `waiting` (sent, no answer frame yet), `answering` (answer
 * frames arriving), `ended` (with its `ending`). Every transition is one of RouterRelay's.
 */
export interface RelayState {
  phase: 'waiting' | 'answering' | 'ended';
  /** Answer frames received (heartbeats not counted). */
  frames: number;
  /** Whether the guard's reservation was claimed by this relay (and is settled or released by it). */
  reserved: boolean;
  ending?: RelayEnding;
}

/** What a relay's owner does with it: answer frames as they come, and the ending, once. */
export interface RelayHandlers<Frame> {
  frame(frame: Exclude<Frame, HeartbeatFrame>, relay: Relay): void;
  ended(ending: RelayEnding, state: Readonly<RelayState>): void;
}

/** What a request is logged under when the edge voids it (see `UsageVoids`). */
export interface Billed {
  route: string;
  /** Without it, the model the request's body names. */
  model?: string;
}

/** One request relayed to the router. */
export interface Relay {
  readonly state: Readonly<RelayState>;
  /** The whole answer went out (its last frame): ends the relay as answered without waiting for the router's end frame. */
  finish(): void;
}

const isHeartbeat = (frame: { kind?: unknown }): frame is HeartbeatFrame => frame.kind === 'heartbeat';

/** Endings that say the answer may have been lost with a NATS server, not that the router failed it. */
const RESENDABLE = new Set<unknown>([EDGE_DISCONNECTED, REQUEST_LOST, ROUTER_RECONNECTED]);

/**
 * The edge's half of every request served by the router (text, decisions, media): it claims the
 * guard's reservation, sends the request on a stream subject, follows the router's liveness
 * (`RouterWatch`: silence gets the replica probed; a slow router is waited for, a gone one is not),
 * and ends exactly once. On any ending but an answer, the router is told to stop
 * (`inference.cancel`; `abandoned` when no answer frame came, so it records an error, never billed),
 * and a reservation the router never answered is released (no usage event will settle it). When the
 * client gets an error status and none of an answer, the request is also voided (`UsageVoids`):
 * charged nothing, even when the router finished it and its usage event was recorded first. A
 * client that goes away cancels the request (the router records it as cancelled).
 */
@Injectable()
@MeteredRelay()
export class RouterRelay {
  private readonly limits: RouterWatchLimits;
  /** Each relay in flight: its watch, and what it does when its answer is lost. */
  private readonly inFlight = new Map<symbol, { watch: RouterWatch; lost: (error: unknown) => void }>();

  constructor(
    private readonly client: NatsRpcClient,
    private readonly probes: RouterProbes,
    private readonly budget: BudgetService,
    private readonly services: ServiceClient,
    private readonly voids: UsageVoids,
    // Silence (no frame at all) after which the router's replica is probed; the longest wait without
    // an answer frame, however alive the router.
    @Inject(EdgeEnv) env: Pick<EdgeEnv, 'INFERENCE_IDLE_TIMEOUT_MS' | 'INFERENCE_SILENCE_TIMEOUT_MS'>,
  ) {
    this.limits = { idleMs: env.INFERENCE_IDLE_TIMEOUT_MS, silenceMs: env.INFERENCE_SILENCE_TIMEOUT_MS };
    // Frames sent to this edge while its connection was away are lost: no answer in flight can be
    // trusted to be whole, whatever the router does.
    probes.onDisconnect(() => {
      for (const { lost } of [...this.inFlight.values()]) lost(EDGE_DISCONNECTED);
    });
    // Another server of the cluster went away: a request on its way through it may be lost.
    probes.onServerLost(() => {
      for (const { watch } of [...this.inFlight.values()]) watch.serverLost();
    });
  }

  /**
   * `billed`: the usage route the request is logged under (`chat.completions`, `embeddings`, ...),
   * and its model when the body does not name it.
   */
  open<C extends StreamContract>(
    contract: C,
    request: MeteredRequest,
    reply: FastifyReply,
    payload: RequestOf<C>,
    billed: Billed,
    handlers: RelayHandlers<ReplyOf<C>>,
  ): Relay {
    const requestId = String(request.id);
    const state: RelayState = { phase: 'waiting', frames: 0, reserved: this.budget.claim(request) };
    const replied = this.services.timeRequest(contract.subject);
    const key = Symbol(requestId);
    let exchange: ReplyExchange | undefined;
    let watch: RouterWatch | undefined;
    /** Which sending of the request the frames belong to: a resent request's first sending is not heard any more. */
    let sending = 0;
    const end = (ending: RelayEnding) => {
      if (state.phase === 'ended') return;
      const answered = state.phase === 'answering';
      state.phase = 'ended';
      state.ending = ending;
      this.inFlight.delete(key);
      exchange?.close();
      watch?.stop();
      replied();
      reply.raw.off('close', clientGone);
      if (ending.kind !== 'answered') cancelAtRouter(this.client, requestId, ending.kind !== 'client-gone' && !answered);
      if (state.reserved && !answered && ending.kind !== 'client-gone') {
        void this.budget.release(request.principal, requestId).catch(() => undefined);
      }
      // The client gets an error status and nothing else (no header has gone out) while the router
      // may have finished the request and reported its usage: silent or gone, or an error of a
      // second sending (the first may have been finished, its answer lost). Whatever the router
      // reports for it, before or after this, is charged nothing. (An error frame of the only
      // sending is the router's own answer, recorded by it as such.)
      const mayHaveRun = ending.kind === 'router-gone' || ending.kind === 'idle' || (ending.kind === 'router-error' && sending > 1);
      if (mayHaveRun && !reply.raw.headersSent) {
        this.voids.void(callerContext(request), billed.model ?? (payload as { body?: { model?: unknown } }).body?.model, billed.route);
      }
      handlers.ended(ending, state);
    };
    const relay: Relay = { state, finish: () => end({ kind: 'answered' }) };
    const lost = (error: unknown, idle = false) => {
      if (state.phase === 'ended') return;
      // The answer may have been lost with a NATS server before any of it reached the client: the
      // request is sent again, once, under the same request id. The router's usage event carries
      // that id as its message id, so JetStream (and the ledger's unique request id) keeps one of
      // the two sendings' events: billed once, answered once.
      if (!idle && sending === 1 && state.phase === 'waiting' && RESENDABLE.has(error)) return send();
      end(idle ? { kind: 'idle', error: error as TimeoutError } : { kind: 'router-gone', error });
    };
    const onFrame = (from: number, frame: ReceivedFrame<ReplyOf<C>>) => {
      const unheard = () => state.phase === 'ended' || from !== sending;
      if (unheard()) return;
      const kind = (frame as { kind?: unknown }).kind;
      if (kind === 'end') return end({ kind: 'answered' });
      if (kind === 'error') return end({ kind: 'router-error', error: (frame as { error: unknown }).error });
      if (isHeartbeat(frame as { kind?: unknown })) return watch?.frame(false, (frame as HeartbeatFrame).router);
      watch?.frame(true, (frame as { router?: string }).router);
      // The frame named a router that reconnected: ended or sent again, and this frame may follow a gap.
      if (unheard()) return;
      if (state.phase === 'waiting') replied();
      state.phase = 'answering';
      state.frames++;
      handlers.frame(frame as Exclude<ReplyOf<C>, HeartbeatFrame>, relay);
    };
    // The response closing before it finished means the client went away.
    const clientGone = () => {
      if (!reply.raw.writableFinished) end({ kind: 'client-gone' });
    };
    const send = () => {
      const current = ++sending;
      exchange?.close();
      watch?.stop();
      watch = new RouterWatch(this.probes, this.limits, lost, contract.family);
      this.inFlight.set(key, { watch, lost });
      try {
        exchange = this.client.stream(contract, payload, (frame) => onFrame(current, frame));
      } catch (error) {
        // Never sent: the router never heard of it.
        end(isNatsPayloadTooLarge(error) ? { kind: 'too-large', error } : { kind: 'not-sent', error });
      }
    };
    send();
    if (state.phase === 'ended') return relay;
    // It may have gone already, while the request was authorised and its cost reserved: the
    // router still hears of it (and records it as cancelled), but stops at once.
    if (reply.raw.destroyed) clientGone();
    else reply.raw.once('close', clientGone);
    return relay;
  }

  /** The router's answer frames, all of them, once it ends; rejects with the failure's error (the client gone: nothing to answer). */
  collect<C extends StreamContract>(
    contract: C,
    request: MeteredRequest,
    reply: FastifyReply,
    payload: RequestOf<C>,
    billed: Billed,
  ): Promise<Exclude<ReplyOf<C>, HeartbeatFrame>[]> {
    return new Promise((resolve, reject) => {
      const frames: Exclude<ReplyOf<C>, HeartbeatFrame>[] = [];
      this.open(contract, request, reply, payload, billed, {
        frame: (frame) => void frames.push(frame),
        ended: (ending) => {
          if (ending.kind === 'answered') resolve(frames);
          else if (ending.kind === 'client-gone') resolve([]);
          else reject(ending);
        },
      });
    });
  }
}

/**
 * Tells the router serving `requestId` to stop (`inference.cancel`, on the request's connection so
 * it cannot overtake the request). `abandoned`: the client gets an error status and no answer, so
 * the router records the request as an error, which costs nothing; otherwise (the client left) it
 * is `cancelled` and billed for what the upstream used.
 */
export function cancelAtRouter(client: NatsRpcClient, requestId: string, abandoned: boolean): void {
  try {
    client.emit(Rpc.inferenceCancel, abandoned ? { requestId, abandoned } : { requestId });
  } catch {
    // The connection is down: the router's request, if it got it, ends on its own.
  }
}
