import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { ModelCatalog } from '@gateway/catalog';
import { ErrorCode, joinMediaReply, MediaReply, MediaReplyPart, MediaRoute } from '@gateway/contracts';
import { DomainError } from '@gateway/platform';
import { firstValueFrom, timeout, toArray } from 'rxjs';
import { assertAccess } from '../auth/access-policy';
import { callerContext } from '../auth/caller-context';
import { BudgetService } from '../billing/budget.service';
import { mediaModelId } from '../billing/request-cost';
import { NATS_CLIENT } from '../nats/service-client';
import { isNatsPayloadTooLarge } from '../errors/to-http-error';
import { MeteredRequest } from '../rate-limit/rate-limit.guard';
import { INFERENCE_IDLE_TIMEOUT_MS } from '../text-generation/text-generation.service';
import { MeteredRelay } from '../policy/metering.decorators';

/** A validated media body; `model` may be absent where the route has a default model. */
type MediaBody = { model?: string | null } & object;

/**
 * Relays an embeddings, moderation or image request to the router: fills in the route's default
 * model (checked against the key's scope like a named one), reserves the worst-case cost (the
 * rate-limit guard estimated it), and gathers the router's reply from its parts. A request the
 * router never answers releases its reservation, since no usage event will settle it.
 */
@Injectable()
@MeteredRelay()
export class MediaRelayService {
  constructor(
    @Inject(NATS_CLIENT) private readonly nats: ClientProxy,
    @Inject(INFERENCE_IDLE_TIMEOUT_MS) private readonly timeoutMs: number,
    private readonly budget: BudgetService,
    private readonly catalog: ModelCatalog,
  ) {}

  async relay(request: MeteredRequest, route: MediaRoute, subject: string, body: MediaBody): Promise<MediaReply> {
    if (body.model === undefined || body.model === null) {
      const fallback = mediaModelId(this.catalog, route, {});
      if (fallback !== undefined) {
        body.model = fallback;
        assertAccess(request.principal, request.ipAllowlist, { ip: request.ip, model: fallback, nowSeconds: Math.floor(Date.now() / 1000) });
      }
    }
    const payload = { ...callerContext(request), body };
    const { principal } = request;
    const requestId = String(request.id);
    this.budget.claim(request); // reserved by the rate-limit guard; this relay settles or releases it now
    let parts: MediaReplyPart[];
    try {
      parts = await firstValueFrom(this.nats.send<MediaReplyPart>(subject, payload).pipe(timeout({ each: this.timeoutMs }), toArray()));
    } catch (error) {
      if (request.costEstimate) await this.budget.release(principal, requestId).catch(() => undefined);
      // The request travels to the router as one NATS message, which the server caps (max_payload).
      if (isNatsPayloadTooLarge(error)) {
        throw new DomainError(
          ErrorCode.InvalidRequest,
          "input is too large to forward in one request (the NATS server's max_payload, 1 MiB by default); split it over several requests",
          'input',
        );
      }
      throw error;
    }
    return joinMediaReply(parts);
  }
}
