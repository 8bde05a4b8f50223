import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  DeletedResponse,
  InputItemsPage,
  InputItemsRequest,
  SaveStoredResponseRequest,
  StoredItems,
  StoredItemsRequest,
  StoredResponseRecord,
  StoredResponseRequest,
  Subjects,
} from '@gateway/contracts';
import { StoredResponsesService } from './stored-responses.service';

@Controller()
export class StoredResponsesController {
  constructor(private readonly responses: StoredResponsesService) {}

  @MessagePattern(Subjects.responsesSave)
  save(@Payload() request: SaveStoredResponseRequest): Promise<{ saved: true }> {
    return this.responses.save(request);
  }

  @MessagePattern(Subjects.responsesGet)
  get(@Payload() request: StoredResponseRequest): Promise<StoredResponseRecord> {
    return this.responses.get(request);
  }

  @MessagePattern(Subjects.responsesDelete)
  delete(@Payload() request: StoredResponseRequest): Promise<DeletedResponse> {
    return this.responses.delete(request);
  }

  @MessagePattern(Subjects.responsesInputItems)
  inputItems(@Payload() request: InputItemsRequest): Promise<InputItemsPage> {
    return this.responses.inputItems(request);
  }

  @MessagePattern(Subjects.responsesItems)
  items(@Payload() request: StoredItemsRequest): Promise<StoredItems> {
    return this.responses.items(request);
  }
}
