import { Injectable } from '@nestjs/common';
import { ModelCatalog } from '@gateway/catalog';
import { joinMediaReply, MediaReply, MediaReplyPart, MediaRequest, MediaRoute, Rpc, StreamContract } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { assertAccess } from '../auth/access-policy';
import { callerContext } from '../auth/caller-context';
import { mediaModelId } from '../billing/request-cost';
import { MeteredRequest } from '../admission/admission.guard';
import { RelayFailure, RouterRelay } from '../nats/router-relay';
import { MeteredRelay } from '../policy/metering.decorators';
import { DomainError, ErrorCode } from '@gateway/errors';

/** A validated media body; `model` may be absent where the route has a default model. */
type MediaBody = { model?: string | null } & object;

/** The media subjects of the `Rpc` table: their replies are `MediaMessage`s. */
export type MediaContract =
  | typeof Rpc.inferenceEmbeddings
  | typeof Rpc.inferenceModerations
  | typeof Rpc.inferenceImages
  | typeof Rpc.inferenceImageEdits
  | typeof Rpc.inferenceTranscriptions
  | typeof Rpc.inferenceTranslations;

/**
 * Relays an embeddings, moderation or image request to the router: fills in the route's default
 * model (checked against the key's scope like a named one), and gathers the router's reply from
 * its parts through the `RouterRelay` (reservation, liveness, cancel, release).
 */
@Injectable()
@MeteredRelay()
export class MediaRelayService {
  constructor(
    private readonly routerRelay: RouterRelay,
    private readonly catalog: ModelCatalog,
  ) {}

  async relay(request: MeteredRequest, route: MediaRoute, contract: MediaContract, body: MediaBody, reply: FastifyReply): Promise<MediaReply | undefined> {
    if (body.model === undefined || body.model === null) {
      const fallback = mediaModelId(this.catalog, route, {});
      if (fallback !== undefined) {
        body.model = fallback;
        assertAccess(request.principal, request.ipAllowlist, { ip: request.ip, model: fallback, nowSeconds: Math.floor(Date.now() / 1000) });
      }
    }
    // heartbeats: the router proves it is alive while it works (see RouterWatch).
    const payload = { ...callerContext(request), body, heartbeats: true } satisfies Omit<MediaRequest, 'body'> & { body: object };
    let parts;
    try {
      parts = await this.routerRelay.collect(contract as StreamContract, request, reply, payload, { route });
    } catch (failure) {
      const { kind, error } = failure as RelayFailure;
      // The request travels to the router as one NATS message, which the server caps (max_payload).
      if (kind === 'too-large') {
        throw new DomainError(
          ErrorCode.InvalidRequest,
          "input is too large to forward in one request (the NATS server's max_payload, 1 MiB by default); split it over several requests",
          'input',
        );
      }
      throw error;
    }
    // The client went away: nothing to answer.
    return parts.length === 0 ? undefined : joinMediaReply(parts as MediaReplyPart[]);
  }
}
