import { Injectable } from '@nestjs/common';
import { DECISION_MAX_INPUT_TOKENS, DECISION_MODEL_ID, DECISION_ROUTE, DecisionRequest, Rpc } from '@gateway/contracts';
import { countTextTokensUpTo } from '@gateway/platform';
import { openaiErrorBody } from '@gateway/client-formats';
import type { FastifyReply } from 'fastify';
import { callerContext } from '../auth/caller-context';
import { MeteredRequest } from '../admission/admission.guard';
import { RelayFailure, RouterRelay } from '../nats/router-relay';
import { MeteredRelay } from '../policy/metering.decorators';
import { DomainError, ErrorCode } from '@gateway/errors';

/**
 * Relays a decision to the router: the input cost (decisions bill input tokens only) is reserved
 * first, and the router's one JSON answer is returned with its status; a 429 carries Retry-After.
 */
@Injectable()
@MeteredRelay()
export class DecisionsService {
  constructor(private readonly relay: RouterRelay) {}

  async decide(request: MeteredRequest, reply: FastifyReply): Promise<void> {
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new DomainError(ErrorCode.InvalidRequest, 'Request body must be a JSON object');
    }
    // heartbeats: the router proves it is alive while it works (see RouterWatch).
    const payload: DecisionRequest = { ...callerContext(request), body: body as Record<string, unknown>, heartbeats: true };
    let frames;
    try {
      frames = await this.relay.collect(Rpc.inferenceDecide, request, reply, payload, { route: DECISION_ROUTE, model: DECISION_MODEL_ID });
    } catch (failure) {
      const { kind, error } = failure as RelayFailure;
      const overLimit = kind === 'too-large' ? overTokenLimit(body as Record<string, unknown>) : null;
      if (overLimit) return void (await reply.status(400).send(overLimit));
      throw error;
    }
    const frame = frames[0];
    if (frame === undefined) return; // the client went away
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
