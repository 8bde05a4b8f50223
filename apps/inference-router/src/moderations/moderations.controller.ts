import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { MediaMessage, ModerationsRequest, Rpc } from '@gateway/contracts';
import { Observable } from 'rxjs';
import { RouterLiveness } from '../liveness/router-liveness';
import { mediaMessages } from '../media/media-reply';
import { ModerationsService } from './moderations.service';

@Controller()
export class ModerationsController {
  constructor(
    private readonly moderations: ModerationsService,
    private readonly liveness: RouterLiveness,
  ) {}

  @Handles(Rpc.inferenceModerations)
  moderate(@Payload() request: ModerationsRequest): Observable<MediaMessage> {
    return mediaMessages(request, this.liveness, () => this.moderations.moderate(request));
  }
}
