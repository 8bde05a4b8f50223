import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Rpc, SpeechBody } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { MeteredRequest } from '../admission/admission.guard';
import { mediaErrors } from '../media/media.api-docs';
import { ApiErrors } from '../openapi/api-docs.decorators';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { Metered } from '../policy/metering.decorators';
import { estimateSpeechCost } from './speech-cost';
import { SpeechService } from './speech.service';

@ApiTags('Audio')
@Controller('audio')
@EndpointFamily(Rpc.inferenceSpeech.family)
export class SpeechController {
  constructor(private readonly speech: SpeechService) {}

  @Post('speech')
  @HttpCode(200)
  @Metered(estimateSpeechCost)
  @ApiOperation({
    summary: 'Text to speech (OpenAI format)',
    description:
      "The audio streams as it is made. Charged the input's characters at the model's `pricing.characters` per million, or the upstream's tokens at `pricing.input` / `pricing.output` when it reports them (logged under `audio.speech`).",
  })
  @ApiProduces('audio/mpeg', 'audio/wav', 'audio/pcm', 'audio/ogg', 'audio/aac', 'audio/flac', 'text/event-stream')
  @ApiResponse({
    status: 200,
    description:
      'The audio in the asked `response_format`. With `stream_format: sse`: events `speech.audio.delta` `{type, audio}` (base64 chunks, in order), then `speech.audio.done` `{type, usage}` (`input_characters`; `input_tokens`, `output_tokens`, `total_tokens` when the upstream reported them).',
    content: {
      'audio/mpeg': { schema: { type: 'string', format: 'binary' } },
      'audio/wav': { schema: { type: 'string', format: 'binary' } },
      'audio/pcm': { schema: { type: 'string', format: 'binary' } },
      'text/event-stream': { schema: { type: 'string' } },
    },
  })
  @ApiErrors(
    mediaErrors(
      'Invalid body: `input` missing or over 4096 characters, a `voice` the model does not list (its catalog `voices`), a `response_format` it does not produce (its `metadata.response_formats`), `speed` outside 0.25–4, an unknown `stream_format`.',
    ),
  )
  speak(@Body() body: SpeechBody, @Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.speech.relay(request, body, reply);
  }
}
