import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import {
  DeletedResponse,
  InputItemsPage,
  InputItemsRequest,
  Rpc,
  SaveStoredResponseRequest,
  StoredItems,
  StoredItemsRequest,
  StoredResponseRecord,
  StoredResponseRequest,
} from '@gateway/contracts';
import { StoredResponsesService } from './stored-responses.service';

@Controller()
export class StoredResponsesController {
  constructor(private readonly responses: StoredResponsesService) {}

  @Handles(Rpc.responsesSave)
  save(@Payload() request: SaveStoredResponseRequest): Promise<{ saved: true }> {
    return this.responses.save(request);
  }

  @Handles(Rpc.responsesGet)
  get(@Payload() request: StoredResponseRequest): Promise<StoredResponseRecord> {
    return this.responses.get(request);
  }

  @Handles(Rpc.responsesDelete)
  delete(@Payload() request: StoredResponseRequest): Promise<DeletedResponse> {
    return this.responses.delete(request);
  }

  @Handles(Rpc.responsesInputItems)
  inputItems(@Payload() request: InputItemsRequest): Promise<InputItemsPage> {
    return this.responses.inputItems(request);
  }

  @Handles(Rpc.responsesItems)
  items(@Payload() request: StoredItemsRequest): Promise<StoredItems> {
    return this.responses.items(request);
  }
}
