import type { TSchema } from 'typebox';
import { ChatCompletion, ChatCompletionRequest } from './chat/chat.schema';
import { MessageObject, MessagesRequest } from './messages/messages.schema';
import {
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
 * `components.schemas`: the request schemas are the very objects the parsers compile.
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
  MessagesRequest,
  Message: MessageObject,
} satisfies Record<string, TSchema>;

export type ClientFormatSchemaName = keyof typeof CLIENT_FORMAT_SCHEMAS;
