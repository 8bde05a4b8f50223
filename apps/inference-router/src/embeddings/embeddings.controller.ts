import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { EmbeddingsRequest, MediaReplyPart, Subjects } from '@gateway/contracts';
import { Observable } from 'rxjs';
import { replyParts } from '../media/media-reply';
import { EmbeddingsService } from './embeddings.service';

@Controller()
export class EmbeddingsController {
  constructor(private readonly embeddings: EmbeddingsService) {}

  @MessagePattern(Subjects.inferenceEmbeddings)
  embed(@Payload() request: EmbeddingsRequest): Observable<MediaReplyPart> {
    return replyParts(() => this.embeddings.embed(request));
  }
}
