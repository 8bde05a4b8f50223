import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Rpc } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { AcceptsXApiKey, AuthenticatedRequest } from '../auth/auth.decorators';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { ErrorFormat } from '../policy/error-format.decorator';
import { Unmetered } from '../policy/metering.decorators';
import { RateLimitBucket } from '../policy/rate-limit-bucket.decorator';
import { TokenCountingService } from './token-counting.service';

const COUNT_ERRORS = {
  400: 'Invalid body (`param` names the field), as the generation route would refuse it.',
  403: 'The key may not use this model (proxy-key whitelist, DevPass rule) or call from this address.',
  404: 'Model not in the catalog.',
};

const HOW_COUNTED =
  "Counted by the model's upstream provider when it has a counting endpoint (Anthropic's `/v1/messages/count_tokens`, OpenAI's " +
  "`/v1/responses/input_tokens`), else by the gateway's tokenizer (o200k_base). Free: nothing is generated, metered or charged. " +
  "Rate-limited apart from generation: the plan's requests per minute apply to counting calls in a bucket of their own.";

/** Token counting in the two formats that define it, with the same key and model checks as generation. */
@ApiTags('Text generation')
@Controller()
@EndpointFamily(Rpc.inferenceCountTokens.family)
export class TokenCountingController {
  constructor(private readonly counting: TokenCountingService) {}

  @Post('messages/count_tokens')
  @HttpCode(200)
  @Unmetered('counts input tokens without generating: free, no reservation, no usage event')
  @RateLimitBucket('token-count')
  @ErrorFormat('anthropic')
  @AcceptsXApiKey()
  @ApiOperation({ summary: 'Count input tokens (Anthropic Messages format)', description: `${HOW_COUNTED} The key may be sent as \`x-api-key\`.` })
  @ApiBody({
    schema: schemaRef('MessagesRequest'),
    description: 'A Messages body; `max_tokens`, `stream` and other generation settings are accepted and ignored.',
  })
  @ApiOkResponse({ schema: schemaRef('MessagesTokenCount') })
  @ApiErrors(COUNT_ERRORS)
  messages(@Req() request: AuthenticatedRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.counting.count('messages', request, reply);
  }

  @Post('responses/input_tokens')
  @HttpCode(200)
  @Unmetered('counts input tokens without generating: free, no reservation, no usage event')
  @RateLimitBucket('token-count')
  @ApiOperation({ summary: 'Count input tokens (OpenAI Responses format)', description: `${HOW_COUNTED} \`model\` and \`input\` are required.` })
  @ApiBody({ schema: schemaRef('ResponsesRequest'), description: 'A Responses body; generation settings are accepted and ignored.' })
  @ApiOkResponse({ schema: schemaRef('ResponsesInputTokens') })
  @ApiErrors(COUNT_ERRORS)
  responses(@Req() request: AuthenticatedRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.counting.count('responses', request, reply);
  }
}
