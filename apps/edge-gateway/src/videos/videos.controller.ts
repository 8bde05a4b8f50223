import { Body, Controller, Get, HttpCode, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { VIDEO_ROUTE, VIDEO_STREAM_DESCRIPTION, VideoGenerationBody } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { MeteredRequest } from '../admission/admission.guard';
import { estimateItemCost } from '../billing/request-cost';
import { Metered, Unmetered } from '../policy/metering.decorators';
import { AcceptEventStreamGuard } from './accept-event-stream.guard';
import { VideosService } from './videos.service';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';

const VideoStream = () =>
  ApiResponse({
    status: 200,
    description: VIDEO_STREAM_DESCRIPTION,
    content: {
      'text/event-stream': {
        schema: {
          oneOf: [schemaRef('VideoHeartbeat'), schemaRef('VideoProgress'), schemaRef('VideoGeneration')],
        },
      },
    },
  });

/**
 * `POST /v1/videos/generations` starts a job and streams its events; `GET
 * /v1/videos/generations/{id}` streams the events of a job the caller's account started (the
 * re-attach route: after a disconnect, or from another edge replica). Both need
 * `Accept: text/event-stream`.
 */
@ApiTags('Videos')
@Controller('videos/generations')
@UseGuards(AcceptEventStreamGuard)
export class VideosController {
  constructor(private readonly videos: VideosService) {}

  @Post()
  @HttpCode(200)
  @Metered((catalog, body) => estimateItemCost(catalog, VIDEO_ROUTE, body))
  @ApiOperation({
    summary: 'Generate a video (server-sent events)',
    description:
      'Send `Accept: text/event-stream`. The job outlives the connection: re-attach with `GET /v1/videos/generations/{id}`. Clients should allow 600 to 900 seconds.',
  })
  @VideoStream()
  @ApiErrors({
    402: 'The account or proxy key cannot cover the price of one video.',
    404: 'Unknown model.',
    406: 'The request does not accept `text/event-stream`.',
  })
  create(@Req() request: MeteredRequest, @Body() body: VideoGenerationBody, @Res() reply: FastifyReply): Promise<void> {
    return this.videos.create(request, body, reply);
  }

  @Get(':id')
  @Unmetered('re-attaches to a job its POST already paid for')
  @ApiOperation({
    summary: "Re-attach to a video job's events",
    description:
      'Any edge replica: the current state first (the final object at once when the job is done), then live events. Jobs are kept 24 hours (failed ones 7 days).',
  })
  @ApiParam({ name: 'id', description: 'The job id: the request id of the POST that created it.' })
  @VideoStream()
  @ApiErrors({ 404: 'No such job for this account.', 406: 'The request does not accept `text/event-stream`.' })
  attach(@Req() request: MeteredRequest, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    return this.videos.attach(request, id, reply);
  }
}
