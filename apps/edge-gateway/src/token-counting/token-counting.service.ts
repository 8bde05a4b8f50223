import { Injectable } from '@nestjs/common';
import { TextFormat, Rpc } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { AuthenticatedRequest } from '../auth/auth.decorators';
import { ServiceClient } from '../nats/service-client';
import { textGenerationRequest } from '../text-generation/text-generation-request';
import { DomainError, ErrorCode } from '@gateway/errors';

/**
 * Asks the router for a body's input tokens and answers with its one JSON frame. No budget is
 * reserved and no usage event follows: counting generates nothing and is free.
 */
@Injectable()
export class TokenCountingService {
  constructor(private readonly services: ServiceClient) {}

  async count(format: TextFormat, request: AuthenticatedRequest, reply: FastifyReply): Promise<void> {
    const frame = await this.services.request(Rpc.inferenceCountTokens, textGenerationRequest(format, request));
    if (frame.kind !== 'json') throw new DomainError(ErrorCode.Internal, 'unexpected stream from the token counter');
    await reply.status(frame.status).send(frame.body);
  }
}
