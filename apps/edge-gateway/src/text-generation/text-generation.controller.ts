import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { TextFormat, Rpc } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { AcceptsXApiKey } from '../auth/auth.decorators';
import { textCostEstimator } from '../billing/request-cost';
import { ErrorFormat } from '../policy/error-format.decorator';
import { Metered } from '../policy/metering.decorators';
import { MeteredRequest } from '../admission/admission.guard';
import { ApiErrors, ApiJsonOrEventStream, schemaRef } from '../openapi/api-docs.decorators';
import { TextGenerationService } from './text-generation.service';

/** What any of the three formats may answer besides the statuses every route has. */
const GENERATION_ERRORS = {
  400: 'Invalid body (`param` names the field, e.g. `messages.0.role`), or the decision model (use `/v1/systemone`).',
  402: "Insufficient credits, or the proxy key's allocation is spent.",
  403: 'The key may not use this model (proxy-key whitelist, DevPass rule) or call from this address.',
  404: 'Model not in the catalog; or (responses) a `previous_response_id` or `item_reference` naming no stored response of the caller.',
  429: 'Rate limit reached, here or upstream.',
  502: 'Every upstream route failed with an error. Other upstream 4xx statuses are passed through with their message.',
  504: 'Every upstream route was unreachable or timed out.',
};

/**
 * The three text-generation formats. The body is passed on as the client sent it: the router
 * parses and validates it in its own format, so every format's rules live in one place.
 */
@ApiTags('Text generation')
@Controller()
@EndpointFamily(Rpc.inferenceText.family)
export class TextGenerationController {
  constructor(private readonly generation: TextGenerationService) {}

  @Post('chat/completions')
  @HttpCode(200)
  @Metered(textCostEstimator('chat'))
  @ApiOperation({ summary: 'Chat completion (OpenAI format)' })
  @ApiBody({ schema: schemaRef('ChatCompletionRequest') })
  @ApiJsonOrEventStream('ChatCompletion', 'A chat completion.', '`data: {chat.completion.chunk}` frames ending in `data: [DONE]`.')
  @ApiErrors(GENERATION_ERRORS)
  chat(@Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.relay('chat', request, reply);
  }

  @Post('responses')
  @HttpCode(200)
  @Metered(textCostEstimator('responses'))
  @ApiOperation({
    summary: 'Response (OpenAI Responses format)',
    description:
      'Stored unless `store: false` (read it back with `GET /v1/responses/{id}`); `previous_response_id` and `item_reference` inputs refer to stored responses of the caller (404 when unknown).',
  })
  @ApiBody({ schema: schemaRef('ResponsesRequest') })
  @ApiJsonOrEventStream('Response', 'A response object.', 'typed events from `response.created` to `response.completed` (or `response.incomplete`).')
  @ApiErrors(GENERATION_ERRORS)
  responses(@Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.relay('responses', request, reply);
  }

  @Post('messages')
  @HttpCode(200)
  @Metered(textCostEstimator('messages'))
  @ErrorFormat('anthropic')
  @AcceptsXApiKey()
  @ApiOperation({ summary: 'Message (Anthropic Messages format)', description: 'The key may be sent as `x-api-key` instead of `Authorization: Bearer`.' })
  @ApiHeader({ name: 'partner-version', required: false, description: 'A date-form version string; accepted, and optional.' })
  @ApiBody({ schema: schemaRef('MessagesRequest') })
  @ApiJsonOrEventStream('Message', 'A message object.', '`message_start`, `content_block_*`, `message_delta` and `message_stop` events (with `ping`s).')
  @ApiErrors(GENERATION_ERRORS)
  messages(@Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.relay('messages', request, reply);
  }

  private relay(format: TextFormat, request: MeteredRequest, reply: FastifyReply): Promise<void> {
    return this.generation.relay(format, request, reply);
  }
}
