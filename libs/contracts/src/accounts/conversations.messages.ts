import { ApiPropertyOptional } from '@nestjs/swagger';
import { IntegerParam } from '../validation';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { StoredResponseScope } from './stored-responses.messages';

/** `GET /v1/conversations/{id}/items` page size, as OpenAI's API: 20 by default, at most 100. */
export const CONVERSATION_ITEMS_DEFAULT_LIMIT = 20;
export const CONVERSATION_ITEMS_MAX_LIMIT = 100;

/** Items one `POST /v1/conversations` or `POST /v1/conversations/{id}/items` may add, as OpenAI. */
export const CONVERSATION_ITEMS_PER_CALL = 20;

/** Items one append may carry: a response's input and output items (the router's writes). */
export const CONVERSATION_APPEND_MAX = 1000;

/** `metadata`, as OpenAI: at most 16 string pairs, keys up to 64 characters, values up to 512. */
export const CONVERSATION_METADATA_MAX_PAIRS = 16;

/** `conversations.create`: a new conversation, with its first items (ids already given). */
export class CreateConversationRequest {
  @IsString()
  @Length(1, 64)
  accountId: string;

  /** The key that creates it: proxy and DevPass keys read back only their own. */
  @IsString()
  @Length(1, 64)
  keyId: string;

  @IsObject()
  metadata: Record<string, string>;

  @IsArray()
  @ArrayMaxSize(CONVERSATION_ITEMS_PER_CALL)
  @IsObject({ each: true })
  items: Record<string, unknown>[];
}

/** `conversations.get` and `conversations.delete`. */
export class ConversationRequest extends StoredResponseScope {
  @IsString()
  @Length(1, 256)
  conversationId: string;
}

/** `conversations.update`: replaces the metadata. */
export class UpdateConversationRequest extends ConversationRequest {
  @IsObject()
  metadata: Record<string, string>;
}

/** `conversations.append`: items added at the end, each with its id (the edge's and the router's writes). */
export class AppendConversationItemsRequest extends ConversationRequest {
  @IsArray()
  @ArrayMaxSize(CONVERSATION_APPEND_MAX)
  @IsObject({ each: true })
  items: Record<string, unknown>[];
}

/** `conversations.item` and `conversations.delete-item`. */
export class ConversationItemRequest extends ConversationRequest {
  @IsString()
  @Length(1, 256)
  itemId: string;
}

/** `GET /v1/conversations/{id}/items` query parameters (OpenAI's). */
export class ConversationItemsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: CONVERSATION_ITEMS_MAX_LIMIT, default: CONVERSATION_ITEMS_DEFAULT_LIMIT })
  @IsOptional()
  @IntegerParam()
  @IsInt()
  @Min(1)
  @Max(CONVERSATION_ITEMS_MAX_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'desc', description: '`desc` lists the newest item first, as OpenAI.' })
  @IsOptional()
  @IsIn(['asc', 'desc'])
  order?: 'asc' | 'desc';

  @ApiPropertyOptional({ description: 'An item id: the page starts after it, in the chosen order.', maxLength: 256 })
  @IsOptional()
  @IsString()
  @Length(1, 256)
  after?: string;

  /** Accepted for compatibility; stored items are returned whole. */
  @ApiPropertyOptional({ type: [String], description: 'Accepted and ignored: items are returned whole.' })
  @IsOptional()
  include?: string | string[];
}

/** `conversations.items`: a page of items; without `limit`, every item (the router's read of the context). */
export class ConversationItemsRequest extends ConversationRequest {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(CONVERSATION_ITEMS_MAX_LIMIT)
  limit?: number;

  @IsOptional()
  @IsIn(['asc', 'desc'])
  order?: 'asc' | 'desc';

  @IsOptional()
  @IsString()
  @Length(1, 256)
  after?: string;
}

/** A conversation as OpenAI spells it. */
export interface ConversationObject {
  id: string;
  object: 'conversation';
  /** Unix seconds. */
  created_at: number;
  metadata: Record<string, string>;
}

export interface DeletedConversation {
  id: string;
  object: 'conversation.deleted';
  deleted: true;
}

export interface ConversationItemsPage {
  object: 'list';
  data: Record<string, unknown>[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}
