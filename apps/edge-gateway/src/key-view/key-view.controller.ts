import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { KeyView, Principal } from '@gateway/contracts';
import { CurrentPrincipal, SkipAccessChecks } from '../auth/auth.decorators';
import { ApiErrors, schemaRef } from '../openapi/api-docs.decorators';
import { KeyViewService } from './key-view.service';

/**
 * `GET /v1/key`: the calling key and what it has left, for every key type. Its errors are OpenAI's,
 * as on `/v1/user/me` and `/v1/user/logs`, the other routes where a key reads about itself.
 */
@ApiTags('Keys')
@Controller('key')
export class KeyViewController {
  constructor(private readonly keys: KeyViewService) {}

  /**
   * Like validate, the access checks are skipped: a disabled or expired proxy key (or one called
   * from outside its IP allowlist) can still read its own state, which is what its holder needs to
   * know why it is refused elsewhere.
   */
  @Get()
  @SkipAccessChecks()
  @ApiOperation({
    summary: 'The calling key and its budgets',
    description:
      'Any key type. Takes no parameters: the answer is always the key that authenticated the request. A proxy key has one budget (its allocation over its `spend_window`); master and DevPass keys none yet.',
  })
  @ApiOkResponse({ schema: schemaRef('KeyView') })
  @ApiErrors({ 401: 'Missing or unknown key (a deleted key included). A disabled or expired proxy key is answered 200.' })
  view(@CurrentPrincipal() principal: Principal): Promise<KeyView> {
    return this.keys.of(principal);
  }
}
