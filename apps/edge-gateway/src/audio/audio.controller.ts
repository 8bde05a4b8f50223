import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { MediaRoutes, Rpc, TranscriptionBody, TranslationBody } from '@gateway/contracts';
import type { FastifyReply } from 'fastify';
import { MeteredRequest } from '../admission/admission.guard';
import { estimateAudioCost } from '../billing/request-cost';
import { MediaRelayService } from '../media/media-relay.service';
import { mediaErrors } from '../media/media.api-docs';
import { sendMediaReply } from '../media/media-reply';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { Metered } from '../policy/metering.decorators';
import { MultipartUpload } from '../uploads/multipart-upload.decorator';
import { AUDIO_FORMATS, audioUpload } from './audio-upload';
import { TranscriptionStreamService } from './transcription-stream.service';

const AUDIO_ERRORS = {
  ...mediaErrors(
    `Invalid field, a missing or empty \`file\`, or a file that is not audio whose duration its header states (${AUDIO_FORMATS}); a model that does not serve the route.`,
  ),
  413: 'The file is larger than `AUDIO_UPLOAD_MAX_FILE_BYTES` (25 MiB) or the body than `AUDIO_UPLOAD_MAX_REQUEST_BYTES`: refused while it is read, before any upstream is called.',
};

const BILLING =
  "Billed at the model's `pricing.per_second` for the audio's seconds (the upstream's, else the duration read from the file's header), or for the tokens the upstream reports, whatever `response_format` was asked.";

/** A 200 as JSON (`json`, `verbose_json`), plain text (`text`, `srt`, `vtt`) or, for a stream, server-sent events. */
const audioAnswer = (description: string, streams: boolean) => ({
  status: 200,
  description,
  content: {
    'application/json': { schema: schemaRef('TranscriptionResult') },
    'text/plain': { schema: { type: 'string' as const, description: '`text`, `srt` or `vtt`.' } },
    ...(streams
      ? { 'text/event-stream': { schema: { type: 'string' as const, description: '`transcript.text.delta` events, then `transcript.text.done` with usage.' } } }
      : {}),
  },
});

@ApiTags('Audio')
@Controller('audio')
@EndpointFamily(Rpc.inferenceTranscriptions.family)
export class AudioController {
  constructor(
    private readonly media: MediaRelayService,
    private readonly streams: TranscriptionStreamService,
  ) {}

  @Post('transcriptions')
  @HttpCode(200)
  @MultipartUpload(audioUpload)
  @Metered((catalog, body) => estimateAudioCost(catalog, MediaRoutes.transcriptions, body))
  @ApiOperation({
    summary: 'Transcribe audio (OpenAI format, multipart/form-data)',
    description: `${BILLING} \`json\` and \`verbose_json\` carry \`usage\`; \`text\`, \`srt\` and \`vtt\` answer plain text. \`stream: true\` (with \`json\` or \`text\`) answers server-sent events as the upstream sends them: \`transcript.text.delta\`, then \`transcript.text.done\` (with the usage billed).`,
  })
  @ApiResponse(audioAnswer('The transcription, in the asked format.', true))
  @ApiErrors(AUDIO_ERRORS)
  async transcribe(@Body() body: TranscriptionBody, @Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    if (body.stream === true) return this.streams.relay(request, body, reply);
    const answer = await this.media.relay(request, MediaRoutes.transcriptions, Rpc.inferenceTranscriptions, body, reply);
    if (answer) await sendMediaReply(reply, answer);
  }

  @Post('translations')
  @HttpCode(200)
  @MultipartUpload(audioUpload)
  @Metered((catalog, body) => estimateAudioCost(catalog, MediaRoutes.translations, body))
  @ApiOperation({
    summary: 'Translate audio into English (OpenAI format, multipart/form-data)',
    description: `${BILLING} \`json\` and \`verbose_json\` carry \`usage\`; \`text\`, \`srt\` and \`vtt\` answer plain text.`,
  })
  @ApiResponse(audioAnswer('The English text, in the asked format.', false))
  @ApiErrors(AUDIO_ERRORS)
  async translate(@Body() body: TranslationBody, @Req() request: MeteredRequest, @Res() reply: FastifyReply): Promise<void> {
    const answer = await this.media.relay(request, MediaRoutes.translations, Rpc.inferenceTranslations, body, reply);
    if (answer) await sendMediaReply(reply, answer);
  }
}
