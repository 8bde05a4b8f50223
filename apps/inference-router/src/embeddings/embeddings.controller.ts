import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { EmbeddingsRequest, MediaMessage, Rpc } from '@gateway/contracts';
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

  @Handles(Rpc.inferenceEmbeddings)
  embed(@Payload() request: EmbeddingsRequest): Observable<MediaMessage> {
    return mediaMessages(request, this.liveness, () => this.embeddings.embed(request));
  }
}
