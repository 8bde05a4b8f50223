import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import {
  AppendConversationItemsRequest,
  ConversationItemRequest,
  ConversationItemsPage,
  ConversationItemsRequest,
  ConversationObject,
  ConversationRequest,
  CreateConversationRequest,
  DeletedConversation,
  Rpc,
  UpdateConversationRequest,
} from '@gateway/contracts';
import { ConversationsService } from './conversations.service';

@Controller()
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @Handles(Rpc.conversationsCreate)
  create(@Payload() request: CreateConversationRequest): Promise<ConversationObject> {
    return this.conversations.create(request);
  }

  @Handles(Rpc.conversationsGet)
  get(@Payload() request: ConversationRequest): Promise<ConversationObject> {
    return this.conversations.get(request);
  }

  @Handles(Rpc.conversationsUpdate)
  update(@Payload() request: UpdateConversationRequest): Promise<ConversationObject> {
    return this.conversations.update(request);
  }

  @Handles(Rpc.conversationsDelete)
  delete(@Payload() request: ConversationRequest): Promise<DeletedConversation> {
    return this.conversations.delete(request);
  }

  @Handles(Rpc.conversationsAppend)
  append(@Payload() request: AppendConversationItemsRequest): Promise<ConversationItemsPage> {
    return this.conversations.append(request);
  }

  @Handles(Rpc.conversationsItems)
  items(@Payload() request: ConversationItemsRequest): Promise<ConversationItemsPage> {
    return this.conversations.items(request);
  }

  @Handles(Rpc.conversationsItem)
  item(@Payload() request: ConversationItemRequest): Promise<Record<string, unknown>> {
    return this.conversations.item(request);
  }

  @Handles(Rpc.conversationsDeleteItem)
  deleteItem(@Payload() request: ConversationItemRequest): Promise<ConversationObject> {
    return this.conversations.deleteItem(request);
  }
}
