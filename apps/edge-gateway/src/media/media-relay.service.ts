import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { ModelCatalog } from '@gateway/catalog';
import { ErrorCode, joinMediaReply, MediaMessage, MediaReply, MediaReplyPart, MediaRequest, MediaRoute, Subjects } from '@gateway/contracts';
import { DomainError } from '@gateway/platform';
import { firstValueFrom, toArray } from 'rxjs';
import { assertAccess } from '../auth/access-policy';
import { callerContext } from '../auth/caller-context';
import { BudgetService } from '../billing/budget.service';
import { mediaModelId } from '../billing/request-cost';
import { NATS_CLIENT } from '../nats/service-client';
import { isNatsPayloadTooLarge } from '../errors/to-http-error';
import { MeteredRequest } from '../admission/admission.guard';
import { ReplyInbox } from '../nats/reply-inbox';
import { cancelAtRouter, routerLost, RouterProbes, RouterWatchLimits, watchRouter } from '../nats/router-liveness';
import { INFERENCE_IDLE_TIMEOUT_MS, INFERENCE_SILENCE_TIMEOUT_MS } from '../text-generation/text-generation.service';
import { MeteredRelay } from '../policy/metering.decorators';

/** A validated media body; `model` may be absent where the route has a default model. */
type MediaBody = { model?: string | null } & object;

/**
 * Relays an embeddings, moderation or image request to the router: fills in the route's default
 * model (checked against the key's scope like a named one), reserves the worst-case cost (the
 * rate-limit guard estimated it), and gathers the router's reply from its parts while following the
 * router's liveness (`RouterWatch`: a router that goes away is noticed within seconds). A request
 * the router never answers releases its reservation, since no usage event will settle it.
 */
@Injectable()
@MeteredRelay()
export class MediaRelayService {
  constructor(
    @Inject(NATS_CLIENT) private readonly nats: ClientProxy,
    @Inject(INFERENCE_IDLE_TIMEOUT_MS) idleMs: number,
    @Inject(INFERENCE_SILENCE_TIMEOUT_MS) silenceMs: number,
    private readonly budget: BudgetService,
    private readonly catalog: ModelCatalog,
    private readonly probes: RouterProbes,
    private readonly inbox: ReplyInbox,
  ) {
    this.limits = { idleMs, silenceMs };
  }

  private readonly limits: RouterWatchLimits;

  async relay(request: MeteredRequest, route: MediaRoute, subject: string, body: MediaBody): Promise<MediaReply> {
    if (body.model === undefined || body.model === null) {
      const fallback = mediaModelId(this.catalog, route, {});
      if (fallback !== undefined) {
        body.model = fallback;
        assertAccess(request.principal, request.ipAllowlist, { ip: request.ip, model: fallback, nowSeconds: Math.floor(Date.now() / 1000) });
      }
    }
    // heartbeats: the router proves it is alive while it works (see RouterWatch).
    const payload = { ...callerContext(request), body, heartbeats: true } satisfies Omit<MediaRequest, 'body'> & { body: object };
    const { principal } = request;
    const requestId = String(request.id);
    this.budget.claim(request); // reserved by the rate-limit guard; this relay settles or releases it now
    let parts: MediaReplyPart[];
    try {
      const messages = this.nats.send<MediaMessage>(subject, payload);
      parts = await firstValueFrom(watchRouter(messages, this.probes, this.limits).pipe(toArray()));
    } catch (error) {
      // The router went away or never answered: it records the request as an error, if at all.
      if (routerLost(error)) cancelAtRouter(this.inbox, requestId, true);
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
