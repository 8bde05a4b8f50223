import { ApiPropertyOptional } from '@nestjs/swagger';
import { IntegerParam } from '../validation';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Max, Min } from 'class-validator';

/** `GET /v1/responses/{id}/input_items` page size, as OpenAI's API: 20 by default, at most 100. */
export const INPUT_ITEMS_DEFAULT_LIMIT = 20;
export const INPUT_ITEMS_MAX_LIMIT = 100;

/** How many `item_reference` ids one request may resolve at once (each is an indexed lookup). */
export const ITEM_REFERENCES_MAX = 1000;

/**
 * Whose stored responses a call may see: the account's, narrowed to one key for proxy and DevPass
 * keys (as `/user/logs`), so sub-users holding proxy keys of one account cannot read each other's
 * conversations. A master key sees every response of its account.
 */
export class StoredResponseScope {
  @IsString()
  @Length(1, 64)
  accountId: string;

  @IsOptional()
  @IsString()
  @Length(1, 64)
  keyId?: string;
}

/** `responses.save`: a Responses-API response with `store: true`, written before the client sees its end. */
export class SaveStoredResponseRequest {
  @IsString()
  @Length(1, 64)
  accountId: string;

  /** The key that created it: proxy and DevPass keys read back only their own. */
  @IsString()
  @Length(1, 64)
  keyId: string;

  /** The Response object exactly as the client got it (its `id` is the stored id). */
  @IsObject()
  response: Record<string, unknown>;

  /** Everything the model saw as input, each item with its id: the earlier turns' items, then this request's. */
  @IsArray()
  inputItems: Record<string, unknown>[];
}

/** `responses.get` and `responses.delete`. */
export class StoredResponseRequest extends StoredResponseScope {
  @IsString()
  @Length(1, 256)
  responseId: string;
}

/** `responses.items`: the stored items `item_reference` inputs name. */
export class StoredItemsRequest extends StoredResponseScope {
  @IsArray()
  @ArrayMaxSize(ITEM_REFERENCES_MAX)
  @IsString({ each: true })
  itemIds: string[];
}

/** `GET /v1/responses/{id}/input_items` query parameters (OpenAI's). */
export class InputItemsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: INPUT_ITEMS_MAX_LIMIT, default: INPUT_ITEMS_DEFAULT_LIMIT })
  @IsOptional()
  @IntegerParam()
  @IsInt()
  @Min(1)
  @Max(INPUT_ITEMS_MAX_LIMIT)
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

export class InputItemsRequest extends StoredResponseRequest {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(INPUT_ITEMS_MAX_LIMIT)
  limit?: number;

  @IsOptional()
  @IsIn(['asc', 'desc'])
  order?: 'asc' | 'desc';

  @IsOptional()
  @IsString()
  @Length(1, 256)
  after?: string;
}

/** What `responses.get` answers. */
export interface StoredResponseRecord {
  response: Record<string, unknown>;
  inputItems: Record<string, unknown>[];
}

/** What `responses.items` answers: the newest stored version of each id found; missing ids are absent. */
export interface StoredItems {
  items: Record<string, Record<string, unknown>>;
}

export interface DeletedResponse {
  id: string;
  object: 'response';
  deleted: true;
}

export interface InputItemsPage {
  object: 'list';
  data: Record<string, unknown>[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}
