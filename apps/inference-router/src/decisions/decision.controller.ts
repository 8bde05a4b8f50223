import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { CallerContext, Rpc, TextFrame } from '@gateway/contracts';
import { firstFieldProblem, Handles } from '@gateway/platform';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { defer, Observable } from 'rxjs';
import { RouterLiveness } from '../liveness/router-liveness';
import { DecisionCall, DecisionService } from './decision.service';
import { DomainError, ErrorCode } from '@gateway/errors';

const CALLER_FIELDS = ['accountId', 'keyId', 'keyType', 'maskedKey', 'ip', 'requestId'] as const;

/**
 * The caller fields of an `inference.decide` payload, validated like the `DecisionRequest` DTO,
 * with `body` passed on untouched. Validated here rather than by the global DTO pipe on purpose:
 * the pipe rebuilds the payload with class-transformer, whose assignment of a `__proto__` key
 * sets the new object's prototype instead of copying the key — the question id `__proto__`
 * would vanish instead of being refused by name.
 */
export function toDecisionCall(payload: unknown): DecisionCall {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new DomainError(ErrorCode.InvalidRequest, 'Request payload must be a JSON object');
  }
  const record = payload as Record<string, unknown>;
  const caller = plainToInstance(CallerContext, Object.fromEntries(CALLER_FIELDS.map((field) => [field, record[field]])));
  const problem = firstFieldProblem(validateSync(caller));
  if (problem) throw new DomainError(ErrorCode.InvalidRequest, problem.message, problem.param);
  const call = caller as DecisionCall;
  // The very object JSON.parse produced: not copied, so own `__proto__` keys are still there.
  call.body = record['body'];
  return call;
}

@Controller()
export class DecisionController {
  constructor(
    private readonly decisions: DecisionService,
    private readonly liveness: RouterLiveness,
  ) {}

  /**
   * Exactly one `json` frame per request, after heartbeats while it runs when the edge asked for
   * them (`heartbeats`). The payload is typed `unknown` so that the global validation pipe passes
   * it through as received (see `toDecisionCall`).
   */
  @Handles(Rpc.inferenceDecide)
  decide(@Payload() payload: unknown): Promise<TextFrame> | Observable<TextFrame> {
    const call = toDecisionCall(payload);
    if ((payload as { heartbeats?: unknown }).heartbeats !== true) return this.decisions.decide(call);
    return this.liveness.withHeartbeats(defer(() => this.decisions.decide(call)));
  }
}
