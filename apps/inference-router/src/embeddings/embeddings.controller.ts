import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { EmbeddingsRequest, MediaMessage, Subjects } from '@gateway/contracts';
import { Observable } from 'rxjs';
import { RouterLiveness } from '../liveness/router-liveness';
import { mediaMessages } from '../media/media-reply';
import { EmbeddingsService } from './embeddings.service';

@Controller()
export class EmbeddingsController {
  constructor(
    private readonly embeddings: EmbeddingsService,
    private readonly liveness: RouterLiveness,
  ) {}

  @MessagePattern(Subjects.inferenceEmbeddings)
  embed(@Payload() request: EmbeddingsRequest): Observable<MediaMessage> {
    return mediaMessages(request, this.liveness, () => this.embeddings.embed(request));
  }
}
