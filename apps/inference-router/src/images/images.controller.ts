import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ImageEditRequest, ImageGenerationRequest, MediaMessage, Rpc } from '@gateway/contracts';
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

  @Handles(Rpc.inferenceImages)
  generate(@Payload() request: ImageGenerationRequest): Observable<MediaMessage> {
    return mediaMessages(request, this.liveness, () => this.images.generate(request));
  }

  @Handles(Rpc.inferenceImageEdits)
  edit(@Payload() request: ImageEditRequest): Observable<MediaMessage> {
    return mediaMessages(request, this.liveness, () => this.images.edit(request));
  }
}
