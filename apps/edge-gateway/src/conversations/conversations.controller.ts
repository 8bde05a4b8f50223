import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  ConversationItemsPage,
  ConversationItemsQuery,
  ConversationObject,
  ConversationRequest,
  DeletedConversation,
  Principal,
  Rpc,
  StoredResponseScope,
} from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';
import { CurrentPrincipal } from '../auth/auth.decorators';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { Unmetered } from '../policy/metering.decorators';
import { ServiceClient } from '../nats/service-client';
import { bodyObject, conversationItems, conversationMetadata, MAX_ID_LENGTH } from './conversation-input';

const NOT_FOUND = {
  404: "No conversation with this id for this key: unknown, expired, deleted, or another account's (or, for a proxy or DevPass key, another key's).",
};
const ITEM_NOT_FOUND = { 404: `${NOT_FOUND[404]} Or no item with this id in it.` };

const ID_PARAM = { name: 'id', description: 'The conversation id (`conv_…`), as `POST /v1/conversations` returned it.' };
const ITEM_PARAM = { name: 'item_id', description: 'An item id of the conversation.' };

/**
 * Conversations-API conversations, kept by account-service like stored responses: created and
 * edited here, continued by `POST /v1/responses` with `conversation`. Master keys see every
 * conversation of their account; proxy and DevPass keys only the ones they created.
 */
@ApiTags('Text generation')
@Controller('conversations')
@EndpointFamily(Rpc.inferenceText.family)
export class ConversationsController {
  constructor(private readonly services: ServiceClient) {}

  @Post()
  @HttpCode(200)
  @Unmetered('creates a conversation; nothing is generated')
  @ApiOperation({ summary: 'Create a conversation', description: 'With up to 20 initial `items` (Responses-API input items) and `metadata`.' })
  @ApiBody({ schema: schemaRef('ConversationCreateRequest'), required: false })
  @ApiOkResponse({ schema: schemaRef('Conversation') })
  @ApiErrors({ 400: 'A bad `items` or `metadata` (`param` names it).' })
  create(@CurrentPrincipal() principal: Principal, @Body() raw: unknown): Promise<ConversationObject> {
    const body = bodyObject(raw);
    const metadata = conversationMetadata(body.metadata);
    const items = conversationItems(body.items, false);
    return this.services.request(Rpc.conversationsCreate, { accountId: principal.accountId, keyId: principal.keyId, metadata, items });
  }

  @Get(':id')
  @Unmetered('reads a conversation; nothing is generated')
  @ApiOperation({ summary: 'A conversation' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ schema: schemaRef('Conversation') })
  @ApiErrors(NOT_FOUND)
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<ConversationObject> {
    return this.services.request(Rpc.conversationsGet, request(principal, id));
  }

  @Post(':id')
  @HttpCode(200)
  @Unmetered('updates a conversation; nothing is generated')
  @ApiOperation({ summary: "Update a conversation's metadata", description: '`metadata` replaces the one it had.' })
  @ApiParam(ID_PARAM)
  @ApiBody({ schema: schemaRef('ConversationUpdateRequest') })
  @ApiOkResponse({ schema: schemaRef('Conversation') })
  @ApiErrors({ ...NOT_FOUND, 400: 'A bad or missing `metadata`.' })
  update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() raw: unknown): Promise<ConversationObject> {
    const body = bodyObject(raw);
    if (body.metadata === undefined || body.metadata === null) throw new DomainError(ErrorCode.InvalidRequest, "Invalid 'metadata': is required.", 'metadata');
    const metadata = conversationMetadata(body.metadata);
    return this.services.request(Rpc.conversationsUpdate, { ...request(principal, id), metadata });
  }

  @Delete(':id')
  @Unmetered('deletes a conversation; nothing is generated')
  @ApiOperation({ summary: 'Delete a conversation', description: 'With its items; later requests naming it get 404.' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ schema: schemaRef('DeletedConversation') })
  @ApiErrors(NOT_FOUND)
  delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<DeletedConversation> {
    return this.services.request(Rpc.conversationsDelete, request(principal, id));
  }

  @Post(':id/items')
  @HttpCode(200)
  @Unmetered('adds items to a conversation; nothing is generated')
  @ApiOperation({ summary: 'Add items to a conversation', description: 'Up to 20 items at the end; answers the items added, as stored (with their ids).' })
  @ApiParam(ID_PARAM)
  @ApiBody({ schema: schemaRef('ConversationItemsCreateRequest') })
  @ApiOkResponse({ schema: schemaRef('ConversationItemList') })
  @ApiErrors({ ...NOT_FOUND, 400: 'A bad or missing `items` (`param` names it).' })
  addItems(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() raw: unknown): Promise<ConversationItemsPage> {
    const items = conversationItems(bodyObject(raw).items, true);
    return this.services.request(Rpc.conversationsAppend, { ...request(principal, id), items });
  }

  @Get(':id/items')
  @Unmetered('lists a conversation; nothing is generated')
  @ApiOperation({ summary: "A conversation's items", description: 'Newest first unless `order=asc`; page with `after`.' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ schema: schemaRef('ConversationItemList') })
  @ApiErrors({ ...NOT_FOUND, 400: 'A bad query parameter (`param` names it), or an `after` that is not an item of this conversation.' })
  items(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: ConversationItemsQuery): Promise<ConversationItemsPage> {
    const { limit, order, after } = query;
    return this.services.request(Rpc.conversationsItems, { ...request(principal, id), limit: limit ?? 20, order: order ?? 'desc', after });
  }

  @Get(':id/items/:item_id')
  @Unmetered('reads a conversation item; nothing is generated')
  @ApiOperation({ summary: 'One item of a conversation' })
  @ApiParam(ID_PARAM)
  @ApiParam(ITEM_PARAM)
  @ApiOkResponse({ schema: { type: 'object', description: 'The item as stored.' } })
  @ApiErrors(ITEM_NOT_FOUND)
  item(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('item_id') itemId: string): Promise<Record<string, unknown>> {
    return this.services.request(Rpc.conversationsItem, { ...request(principal, id), itemId: itemRef(itemId) });
  }

  @Delete(':id/items/:item_id')
  @Unmetered('deletes a conversation item; nothing is generated')
  @ApiOperation({ summary: 'Delete an item of a conversation', description: 'Answers the conversation, as OpenAI.' })
  @ApiParam(ID_PARAM)
  @ApiParam(ITEM_PARAM)
  @ApiOkResponse({ schema: schemaRef('Conversation') })
  @ApiErrors(ITEM_NOT_FOUND)
  deleteItem(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('item_id') itemId: string): Promise<ConversationObject> {
    return this.services.request(Rpc.conversationsDeleteItem, { ...request(principal, id), itemId: itemRef(itemId) });
  }
}

function scope(principal: Principal): StoredResponseScope {
  return { accountId: principal.accountId, ...(principal.keyType === 'master' ? {} : { keyId: principal.keyId }) };
}

function request(principal: Principal, id: string): ConversationRequest {
  if (id.length > MAX_ID_LENGTH) throw new DomainError(ErrorCode.NotFound, `Conversation with id '${id.slice(0, 64)}…' not found.`, 'conversation_id');
  return { ...scope(principal), conversationId: id };
}

function itemRef(itemId: string): string {
  if (itemId.length > MAX_ID_LENGTH) throw new DomainError(ErrorCode.NotFound, `Item with id '${itemId.slice(0, 64)}…' not found.`, 'item_id');
  return itemId;
}
