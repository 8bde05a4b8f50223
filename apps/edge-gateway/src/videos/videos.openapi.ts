import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'VideoHeartbeat', description: 'Written every `VIDEO_HEARTBEAT_MS` (default 10 s) while the job runs.' })
export class VideoHeartbeatSchema {
  @ApiProperty({ enum: [true] })
  heartbeat: true;
}

@ApiSchema({ name: 'VideoProgress' })
export class VideoProgressSchema {
  @ApiProperty({ description: 'The job id (the request id of the POST that created it).' })
  id: string;

  @ApiProperty({ enum: ['video.generation.progress'] })
  object: 'video.generation.progress';

  @ApiProperty({ enum: ['queued', 'in_progress'] })
  status: 'queued' | 'in_progress';

  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100 })
  progress: number;
}

@ApiSchema({ name: 'VideoGenerationError' })
class VideoGenerationErrorSchema {
  @ApiProperty() message: string;
  @ApiProperty({ enum: ['video_generation_error'] }) type: string;
  @ApiProperty({ description: 'e.g. `upstream_error`, `internal_error`.' }) code: string;
}

@ApiSchema({ name: 'VideoGeneration', description: 'The last object of the stream: the result, or the failure.' })
export class VideoGenerationSchema {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['video.generation'] }) object: 'video.generation';
  @ApiProperty({ enum: ['completed', 'failed'] }) status: 'completed' | 'failed';
  @ApiPropertyOptional({ description: 'completed' }) model?: string;
  @ApiPropertyOptional({ description: 'completed: the aspect ratio, e.g. `16:9`.' }) size?: string;
  @ApiPropertyOptional({ description: 'completed: pixels, e.g. `320x180`.' }) resolution?: string;
  @ApiPropertyOptional({ description: 'completed: seconds.' }) duration?: number;
  @ApiPropertyOptional({ description: 'completed, e.g. `video/x-msvideo`.' }) content_type?: string;
  @ApiPropertyOptional({ format: 'uri', description: 'completed: a signed `/v1/files/videos/...` URL valid for `FILE_URL_TTL_SECONDS`.' })
  url?: string;
  @ApiPropertyOptional({ type: VideoGenerationErrorSchema, description: 'failed' }) error?: VideoGenerationErrorSchema;
}

export const VIDEO_STREAM_DESCRIPTION =
  'A `text/event-stream` in which every non-empty line is one JSON object (no `data:` prefix): ' +
  '`VideoHeartbeat` lines while the job runs, `VideoProgress` objects, then one `VideoGeneration` ' +
  '(completed or failed), after which the stream ends. Headers `x-request-id` and `x-video-job-id` carry the job id.';
