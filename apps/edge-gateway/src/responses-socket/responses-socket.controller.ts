import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Rpc } from '@gateway/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../errors/error-formats';
import { ApiErrors } from '../openapi/api-docs.decorators';
import { EndpointFamily } from '../policy/endpoint-family.decorator';

export const UPGRADE_REQUIRED_MESSAGE =
  'GET /v1/responses is the Responses WebSocket: send the request with Upgrade: websocket, then response.create messages (or POST /v1/responses over HTTP)';

/**
 * `GET /v1/responses`: the WebSocket mode of the Responses API. The upgrade itself is taken by
 * `ResponsesSockets`, which first asks this route (through the whole HTTP pipeline: key, key state,
 * IP allowlist, revocation epoch, rate limit) whether the caller may open a socket; a plain GET
 * that passes those checks is told to upgrade (426).
 */
@ApiTags('Text generation')
@Controller()
@EndpointFamily(Rpc.inferenceText.family)
export class ResponsesSocketController {
  @Get('responses')
  @ApiOperation({
    summary: 'Response over WebSocket (OpenAI Responses WebSocket mode)',
    description:
      'Upgrade to a WebSocket, then send `{"type": "response.create", ...}` messages whose other fields are those of `POST /v1/responses` ' +
      '(`stream` is implied; `background` is refused). Each answer is the same sequence of events as the SSE stream, one JSON message per event, ' +
      'ending in `response.completed`, `response.incomplete`, `response.failed` or `error` (`{"type": "error", "status", "error": {...}}`). ' +
      'One response at a time per socket. Authentication, metering, budgets and rate limits apply to every `response.create` exactly as over HTTP. ' +
      'The socket is closed with 1000 when idle, 1008 when its key is revoked or disabled, and 1001 when the edge shuts down (after the response in progress).',
  })
  @ApiResponse({ status: 101, description: 'Switching Protocols: the WebSocket is open.' })
  @ApiResponse({ status: 426, description: 'Upgrade Required: the request had no `Upgrade: websocket`.' })
  @ApiErrors({ 403: 'The key may not be used from this address (proxy-key IP allowlist).', 429: 'Rate limit reached (the upgrade counts as one request).' })
  upgradeRequired(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    void reply
      .status(426)
      .header('upgrade', 'websocket')
      .header('connection', 'Upgrade')
      .send(errorBody('openai', { status: 426, message: UPGRADE_REQUIRED_MESSAGE }, String(request.id)));
  }
}
