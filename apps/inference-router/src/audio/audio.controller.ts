import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { MediaMessage, Rpc, TranscriptionFrame, TranscriptionRequest, TranslationRequest } from '@gateway/contracts';
import { Observable } from 'rxjs';
import { RouterLiveness } from '../liveness/router-liveness';
import { mediaMessages } from '../media/media-reply';
import { TranscriptionsService } from './transcriptions.service';

@Controller()
export class AudioController {
  constructor(
    private readonly transcriptions: TranscriptionsService,
    private readonly liveness: RouterLiveness,
  ) {}

  @Handles(Rpc.inferenceTranscriptions)
  transcribe(@Payload() request: TranscriptionRequest): Observable<MediaMessage> {
    return mediaMessages(request, this.liveness, () => this.transcriptions.transcribe(request));
  }

  /** A transcription with `stream: true`: its events as they come; heartbeats while the upstream is silent, when the edge asked for them. */
  @Handles(Rpc.inferenceTranscriptionStream)
  streamTranscription(@Payload() request: TranscriptionRequest): Observable<TranscriptionFrame> {
    const frames = this.transcriptions.stream(request, this.liveness.id);
    return request.heartbeats === true ? this.liveness.withHeartbeats(frames) : frames;
  }

  @Handles(Rpc.inferenceTranslations)
  translate(@Payload() request: TranslationRequest): Observable<MediaMessage> {
    return mediaMessages(request, this.liveness, () => this.transcriptions.translate(request));
  }
}
