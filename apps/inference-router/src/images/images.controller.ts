import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ImageGenerationRequest, MediaReplyPart, Subjects } from '@gateway/contracts';
import { Observable } from 'rxjs';
import { replyParts } from '../media/media-reply';
import { ImagesService } from './images.service';

@Controller()
export class ImagesController {
  constructor(private readonly images: ImagesService) {}

  @MessagePattern(Subjects.inferenceImages)
  generate(@Payload() request: ImageGenerationRequest): Observable<MediaReplyPart> {
    return replyParts(() => this.images.generate(request));
  }
}
