import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { MediaReplyPart, ModerationsRequest, Subjects } from '@gateway/contracts';
import { Observable } from 'rxjs';
import { replyParts } from '../media/media-reply';
import { ModerationsService } from './moderations.service';

@Controller()
export class ModerationsController {
  constructor(private readonly moderations: ModerationsService) {}

  @MessagePattern(Subjects.inferenceModerations)
  moderate(@Payload() request: ModerationsRequest): Observable<MediaReplyPart> {
    return replyParts(() => this.moderations.moderate(request));
  }
}
