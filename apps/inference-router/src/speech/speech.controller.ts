import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { Rpc, SpeechFrame, SpeechRequest } from '@gateway/contracts';
import { Observable } from 'rxjs';
import { RouterLiveness } from '../liveness/router-liveness';
import { SpeechService } from './speech.service';

@Controller()
export class SpeechController {
  constructor(
    private readonly speech: SpeechService,
    private readonly liveness: RouterLiveness,
  ) {}

  /** The audio in frames as it is made; heartbeats while the upstream is silent, when the edge asked for them. */
  @Handles(Rpc.inferenceSpeech)
  speak(@Payload() request: SpeechRequest): Observable<SpeechFrame> {
    const frames = this.speech.speak(request, this.liveness.id);
    return request.heartbeats === true ? this.liveness.withHeartbeats(frames) : frames;
  }
}
