import type { TSchema } from 'typebox';
import { ChatCompletion, ChatCompletionRequest } from './chat/chat.schema';
import { OpenAIErrorBody } from './chat/error-body';
import { DetailErrorBody } from './detail/error-body';
import { AnthropicErrorBody } from './messages/error-body';
import { MessageObject, MessagesRequest } from './messages/messages.schema';
import {
  ConversationCreateRequest,
  ConversationItemList,
  ConversationItemsCreateRequest,
  ConversationObject,
  ConversationUpdateRequest,
  DeletedConversation,
  DeletedResponse,
  ResponseInputItemList,
  ResponseObject,
  ResponsesFunctionCall,
  ResponsesOutputMessage,
  ResponsesReasoningItem,
  ResponsesRequest,
} from './responses/responses.schema';

/**
 * Every wire shape of the three formats by the name `/v1/openapi.json` gives it under
 * `components.schemas`: the request schemas are the very objects the parsers compile; the error
 * bodies are the types the error renderers return.
 */
export const CLIENT_FORMAT_SCHEMAS = {
  ChatCompletionRequest,
  ChatCompletion,
  ResponsesRequest,
  Response: ResponseObject,
  ResponsesOutputMessage,
  ResponsesReasoningItem,
  ResponsesFunctionCall,
  DeletedResponse,
  ResponseInputItemList,
  Conversation: ConversationObject,
  DeletedConversation,
  ConversationItemList,
  ConversationCreateRequest,
  ConversationUpdateRequest,
  ConversationItemsCreateRequest,
  MessagesRequest,
  Message: MessageObject,
  OpenAIError: OpenAIErrorBody,
  AnthropicError: AnthropicErrorBody,
  DetailError: DetailErrorBody,
} satisfies Record<string, TSchema>;

export type ClientFormatSchemaName = keyof typeof CLIENT_FORMAT_SCHEMAS;
