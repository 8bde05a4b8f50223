import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ImageGenerationRequest, MediaMessage, Subjects } from '@gateway/contracts';
import { Observable } from 'rxjs';
import { RouterLiveness } from '../liveness/router-liveness';
import { mediaMessages } from '../media/media-reply';
import { ImagesService } from './images.service';

@Controller()
export class ImagesController {
  constructor(
    private readonly images: ImagesService,
    private readonly liveness: RouterLiveness,
  ) {}

  @MessagePattern(Subjects.inferenceImages)
  generate(@Payload() request: ImageGenerationRequest): Observable<MediaMessage> {
    return mediaMessages(request, this.liveness, () => this.images.generate(request));
  }
}
