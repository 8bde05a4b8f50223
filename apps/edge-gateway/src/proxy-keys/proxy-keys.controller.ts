import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CreateProxyKeyDto,
  MessageResponse,
  Principal,
  ProxyKeyMessages,
  ProxyKeyRecord,
  ProxyKeyRef,
  ToggleResponse,
  UpdateProxyKeyDto,
  UpdateProxyKeyFieldsDto,
  ValidateProxyKeyDto,
  type ValidateProxyKeyResponse,
} from '@gateway/contracts';
import { LEGACY_QUERY_LOOKUP_PATH } from '../http/legacy-urls';
import { checkProxyKey } from '../auth/access-policy';
import { AuthenticatedRequest, CurrentPrincipal, KeyTypes, SkipAccessChecks } from '../auth/auth.decorators';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { ErrorFormat } from '../policy/error-format.decorator';
import { KeyViewService } from '../key-view/key-view.service';
import { ProxyKeysService } from './proxy-keys.service';

const NOT_FOUND = { 404: 'Proxy key not found: unknown, or owned by another account.' };
const ABOVE_DAILY_LIMIT = "Invalid body, or `allocated_ammount` above the plan's daily limit (`Allocated ammount cannot exceed your daily limit of <number>`).";
const LEGACY = 'Legacy form, discouraged: use the body-field form.';

/**
 * Proxy-key administration, for the account's master key. The key acted on is named in the body;
 * the legacy trailing-slash forms name it in the path or the query and behave the same.
 */
@ApiTags('Proxy keys')
@Controller('auth')
@ErrorFormat('detail')
export class ProxyKeysController {
  constructor(
    private readonly proxyKeys: ProxyKeysService,
    private readonly keyView: KeyViewService,
  ) {}

  @Post('proxy/create')
  @HttpCode(201)
  @KeyTypes('master')
  @ApiOperation({ summary: 'Create a proxy key' })
  @ApiCreatedResponse({ schema: schemaRef('ProxyKey'), description: 'The new key (without `user_id` and `enabled_thinking`).' })
  @ApiErrors({ 400: ABOVE_DAILY_LIMIT, 403: "Not a master key, or the plan's proxy-key limit is reached." })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateProxyKeyDto): Promise<ProxyKeyRecord> {
    return this.proxyKeys.create(principal.accountId, body);
  }

  @Get('proxy')
  @KeyTypes('master')
  @ApiOperation({ summary: "List the account's proxy keys" })
  @ApiOkResponse({ schema: schemaRef('ProxyKeys') })
  list(@CurrentPrincipal() principal: Principal): Promise<ProxyKeyRecord[]> {
    return this.proxyKeys.list(principal.accountId);
  }

  @Post('proxy/lookup')
  @HttpCode(200)
  @KeyTypes('master')
  @ApiOperation({ summary: 'Look one proxy key up' })
  @ApiOkResponse({ schema: schemaRef('ProxyKey'), description: 'The record, with `user_id` and `enabled_thinking`.' })
  @ApiErrors(NOT_FOUND)
  lookup(@CurrentPrincipal() principal: Principal, @Body() body: ProxyKeyRef): Promise<ProxyKeyRecord> {
    return this.proxyKeys.lookup(principal.accountId, body.proxy_key);
  }

  @Post('proxy/update')
  @HttpCode(200)
  @KeyTypes('master')
  @ApiOperation({ summary: 'Update a proxy key', description: 'Only the fields sent change; `spend_window: null` clears the window.' })
  @ApiOkResponse({ schema: schemaRef('MessageResponse'), description: '`{"message": "Proxy key updated"}`' })
  @ApiErrors({ 400: ABOVE_DAILY_LIMIT, ...NOT_FOUND })
  update(@CurrentPrincipal() principal: Principal, @Body() body: UpdateProxyKeyDto): Promise<MessageResponse> {
    return this.proxyKeys.update(principal.accountId, body);
  }

  @Post('proxy/toggle')
  @HttpCode(200)
  @KeyTypes('master')
  @ApiOperation({ summary: 'Enable or disable a proxy key' })
  @ApiOkResponse({ schema: schemaRef('ToggleResponse') })
  @ApiErrors(NOT_FOUND)
  toggle(@CurrentPrincipal() principal: Principal, @Body() body: ProxyKeyRef): Promise<ToggleResponse> {
    return this.proxyKeys.toggle(principal.accountId, body.proxy_key);
  }

  @Post('proxy/remove')
  @HttpCode(200)
  @KeyTypes('master')
  @ApiOperation({ summary: 'Delete one proxy key' })
  @ApiOkResponse({ schema: schemaRef('MessageResponse'), description: '`{"message": "Proxy key deleted"}`' })
  @ApiErrors(NOT_FOUND)
  remove(@CurrentPrincipal() principal: Principal, @Body() body: ProxyKeyRef): Promise<MessageResponse> {
    return this.proxyKeys.remove(principal.accountId, body.proxy_key);
  }

  @Delete('proxy/delete')
  @KeyTypes('master')
  @ApiOperation({ summary: 'Delete every proxy key of the account (irreversible)' })
  @ApiOkResponse({ schema: schemaRef('MessageResponse'), description: '`{"message": "Proxy keys deleted"}`' })
  removeAll(@CurrentPrincipal() principal: Principal): Promise<MessageResponse> {
    return this.proxyKeys.removeAll(principal.accountId);
  }

  @Post('proxy/validate')
  @HttpCode(200)
  @KeyTypes('proxy')
  @SkipAccessChecks()
  @ApiOperation({
    summary: 'Check a proxy key',
    description:
      'Authorized with the proxy key itself. Checks, in order: enabled, expiry, `model` against the whitelist (when sent), caller IP. `budgets` is what `GET /v1/key` shows.',
  })
  @ApiOkResponse({ schema: schemaRef('ValidateProxyKeyResponse') })
  @ApiErrors({ 401: 'Missing or unknown key. A disabled or expired proxy key is answered 200 with `valid: false`.' })
  async validate(@Req() request: AuthenticatedRequest, @Body() body: ValidateProxyKeyDto): Promise<ValidateProxyKeyResponse> {
    const refusal = checkProxyKey(request.principal.proxy!, request.ipAllowlist, {
      ip: request.ip,
      model: body.model,
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    // The verdict is the one every other route would apply now (the edge's); the figures are key-service's.
    const { budgets } = await this.keyView.of(request.principal);
    return refusal ? { valid: false, message: refusal.message, budgets } : { valid: true, message: ProxyKeyMessages.accessGranted, budgets };
  }

  // Legacy forms (discouraged, still served).

  /** `GET /auth/proxy/{proxy_key}`: one lookup. */
  @Get('proxy/:proxy_key')
  @KeyTypes('master')
  @ApiOperation({ summary: 'Look one proxy key up (path form)', description: LEGACY, deprecated: true })
  @ApiOkResponse({ schema: schemaRef('ProxyKey') })
  @ApiErrors(NOT_FOUND)
  legacyLookup(@CurrentPrincipal() principal: Principal, @Param() params: ProxyKeyRef): Promise<ProxyKeyRecord> {
    return this.proxyKeys.lookup(principal.accountId, params.proxy_key);
  }

  /** `GET /auth/proxy/?proxy_key=...` arrives here (see http/legacy-urls.ts): one lookup. */
  @Get(LEGACY_QUERY_LOOKUP_PATH)
  @KeyTypes('master')
  @ApiOperation({ summary: 'Look one proxy key up (query form)', description: LEGACY, deprecated: true })
  @ApiOkResponse({ schema: schemaRef('ProxyKey') })
  @ApiErrors(NOT_FOUND)
  legacyQueryLookup(@CurrentPrincipal() principal: Principal, @Query() query: ProxyKeyRef): Promise<ProxyKeyRecord> {
    return this.proxyKeys.lookup(principal.accountId, query.proxy_key);
  }

  @Post('proxy/toggle/:proxy_key')
  @HttpCode(200)
  @KeyTypes('master')
  @ApiOperation({ summary: 'Enable or disable a proxy key (path form)', description: LEGACY, deprecated: true })
  @ApiOkResponse({ schema: schemaRef('ToggleResponse') })
  @ApiErrors(NOT_FOUND)
  legacyToggle(@CurrentPrincipal() principal: Principal, @Param() params: ProxyKeyRef): Promise<ToggleResponse> {
    return this.proxyKeys.toggle(principal.accountId, params.proxy_key);
  }

  @Delete('proxy/delete/:proxy_key')
  @KeyTypes('master')
  @ApiOperation({ summary: 'Delete one proxy key (path form)', description: LEGACY, deprecated: true })
  @ApiOkResponse({ schema: schemaRef('MessageResponse'), description: '`{"message": "Proxy key deleted"}`' })
  @ApiErrors(NOT_FOUND)
  legacyRemove(@CurrentPrincipal() principal: Principal, @Param() params: ProxyKeyRef): Promise<MessageResponse> {
    return this.proxyKeys.remove(principal.accountId, params.proxy_key);
  }

  @Post('proxy/update/:proxy_key')
  @HttpCode(200)
  @KeyTypes('master')
  @ApiOperation({ summary: 'Update a proxy key (path form)', description: LEGACY, deprecated: true })
  @ApiOkResponse({ schema: schemaRef('MessageResponse'), description: '`{"message": "Proxy key updated"}`' })
  @ApiErrors({ 400: ABOVE_DAILY_LIMIT, ...NOT_FOUND })
  legacyUpdate(@CurrentPrincipal() principal: Principal, @Param() params: ProxyKeyRef, @Body() body: UpdateProxyKeyFieldsDto): Promise<MessageResponse> {
    return this.proxyKeys.update(principal.accountId, { ...body, proxy_key: params.proxy_key });
  }
}
