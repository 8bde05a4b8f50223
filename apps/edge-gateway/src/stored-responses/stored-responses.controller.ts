import { Controller, Delete, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  DeletedResponse,
  InputItemsPage,
  InputItemsQuery,
  InputItemsRequest,
  Principal,
  StoredResponseRequest,
  StoredResponseScope,
  Rpc,
} from '@gateway/contracts';
import { CurrentPrincipal } from '../auth/auth.decorators';
import { EndpointFamily } from '../policy/endpoint-family.decorator';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { Unmetered } from '../policy/metering.decorators';
import { ServiceClient } from '../nats/service-client';
import { DomainError, ErrorCode } from '@gateway/errors';

const NOT_FOUND = {
  404: "No stored response with this id for this key: unknown, expired, deleted, stored with `store: false`, or another account's (or, for a proxy or DevPass key, another key's).",
};

/** Longer than any id the gateway gives; refused here rather than sent on. */
const MAX_ID_LENGTH = 256;

const ID_PARAM = { name: 'id', description: 'The response id (`resp_…`), as `POST /v1/responses` returned it.' };

/**
 * Stored Responses-API responses (`store: true`, the default), kept by account-service. Master keys
 * see every response of their account; proxy and DevPass keys only the ones they created.
 */
@ApiTags('Text generation')
@Controller('responses')
@EndpointFamily(Rpc.inferenceText.family)
export class StoredResponsesController {
  constructor(private readonly services: ServiceClient) {}

  @Get(':id')
  @Unmetered('reads a stored response; nothing is generated')
  @ApiOperation({ summary: 'A stored response', description: 'The Response object as `POST /v1/responses` returned it.' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ schema: schemaRef('Response') })
  @ApiErrors(NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<Record<string, unknown>> {
    const record = await this.services.request(Rpc.responsesGet, request(principal, id));
    return record.response;
  }

  @Delete(':id')
  @Unmetered('deletes a stored response; nothing is generated')
  @ApiOperation({ summary: 'Delete a stored response', description: 'Later references to it (`previous_response_id`, `item_reference`) get 404.' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ schema: schemaRef('DeletedResponse') })
  @ApiErrors(NOT_FOUND)
  delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<DeletedResponse> {
    return this.services.request(Rpc.responsesDelete, request(principal, id));
  }

  @Get(':id/input_items')
  @Unmetered('lists a stored response; nothing is generated')
  @ApiOperation({
    summary: "A stored response's input items",
    description: 'Everything its model saw as input (with `previous_response_id`, the earlier turns too), newest first unless `order=asc`.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ schema: schemaRef('ResponseInputItemList') })
  @ApiErrors({ ...NOT_FOUND, 400: 'A bad query parameter (`param` names it), or an `after` that is not an item of this response.' })
  inputItems(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: InputItemsQuery): Promise<InputItemsPage> {
    const { limit, order, after } = query;
    const payload: InputItemsRequest = { ...request(principal, id), limit, order, after };
    return this.services.request(Rpc.responsesInputItems, payload);
  }
}

function scope(principal: Principal): StoredResponseScope {
  return { accountId: principal.accountId, ...(principal.keyType === 'master' ? {} : { keyId: principal.keyId }) };
}

function request(principal: Principal, id: string): StoredResponseRequest {
  if (id.length > MAX_ID_LENGTH) throw new DomainError(ErrorCode.NotFound, `Response with id '${id.slice(0, 64)}…' not found.`, 'response_id');
  return { ...scope(principal), responseId: id };
}
