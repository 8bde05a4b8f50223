import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { DECISION_MAX_INPUT_TOKENS, DecisionRequest, ErrorCode, Subjects, TextFrame } from '@gateway/contracts';
import { countTextTokensUpTo, DomainError } from '@gateway/platform';
import { openaiErrorBody } from '@gateway/client-formats';
import type { FastifyReply } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { callerContext } from '../auth/caller-context';
import { isNatsPayloadTooLarge } from '../errors/to-http-error';
import { BudgetService } from '../billing/budget.service';
import { NATS_CLIENT, ServiceClient } from '../nats/service-client';
import { MeteredRequest } from '../admission/admission.guard';
import { ReplyInbox } from '../nats/reply-inbox';
import { cancelAtRouter, routerLost, RouterProbes, RouterWatchLimits, watchRouter } from '../nats/router-liveness';
import { INFERENCE_IDLE_TIMEOUT_MS, INFERENCE_SILENCE_TIMEOUT_MS } from '../text-generation/text-generation.service';
import { MeteredRelay } from '../policy/metering.decorators';

/**
 * Relays a decision to the router: the input cost (decisions bill input tokens only) is reserved
 * first, and the router's one JSON answer is returned with its status; a 429 carries Retry-After.
 */
@Injectable()
@MeteredRelay()
export class DecisionsService {
  constructor(
    @Inject(NATS_CLIENT) private readonly nats: ClientProxy,
    @Inject(INFERENCE_IDLE_TIMEOUT_MS) idleMs: number,
    @Inject(INFERENCE_SILENCE_TIMEOUT_MS) silenceMs: number,
    private readonly budget: BudgetService,
    private readonly services: ServiceClient,
    private readonly probes: RouterProbes,
    private readonly inbox: ReplyInbox,
  ) {
    this.limits = { idleMs, silenceMs };
  }

  private readonly limits: RouterWatchLimits;

  async decide(request: MeteredRequest, reply: FastifyReply): Promise<void> {
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new DomainError(ErrorCode.InvalidRequest, 'Request body must be a JSON object');
    }
    const { principal } = request;
    const requestId = String(request.id);
    this.budget.claim(request); // reserved by the rate-limit guard; this relay settles or releases it now
    // heartbeats: the router proves it is alive while it works (see RouterWatch).
    const payload: DecisionRequest = { ...callerContext(request), body: body as Record<string, unknown>, heartbeats: true };
    let frame: TextFrame;
    const replied = this.services.timeRequest(Subjects.inferenceDecide);
    try {
      frame = await firstValueFrom(watchRouter(this.nats.send<TextFrame>(Subjects.inferenceDecide, payload), this.probes, this.limits)).finally(replied);
    } catch (error) {
      if (routerLost(error)) cancelAtRouter(this.inbox, requestId, true);
      // The router never answered: no usage event will settle the reservation.
      if (request.costEstimate) await this.budget.release(principal, requestId).catch(() => undefined);
      const overLimit = isNatsPayloadTooLarge(error) ? overTokenLimit(body as Record<string, unknown>) : null;
      if (overLimit) return void (await reply.status(400).send(overLimit));
      throw error;
    }
    if (frame.kind !== 'json') throw new DomainError(ErrorCode.Internal, 'unexpected stream from the decision engine');
    const retryAfter = (frame.body as { error?: { retry_after?: unknown } })?.error?.retry_after;
    if (frame.status === 429 && Number.isFinite(retryAfter)) void reply.header('retry-after', String(retryAfter));
    await reply.status(frame.status).send(frame.body);
  }
}

/**
 * A body too large for the message bus is almost always far over the spec's token limit: then the
 * caller gets the limit's 400 (as the router words it) rather than a 413 about our transport.
 */
function overTokenLimit(body: Record<string, unknown>): Record<string, unknown> | null {
  // Counted exactly, and only up to the limit (bounded work): no estimate is reported as a count.
  const tokens = countTextTokensUpTo(JSON.stringify({ state: body.state, questions: body.questions }), DECISION_MAX_INPUT_TOKENS);
  if (tokens !== undefined) return null;
  const message = `state and questions together are more than ${DECISION_MAX_INPUT_TOKENS} tokens, the limit`;
  return openaiErrorBody({ status: 400, message, code: ErrorCode.ContextLengthExceeded, param: 'state' });
}
