import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { FileUrls, isValidObjectKey, OBJECT_STORE, ObjectStore } from '@gateway/storage';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/auth.decorators';
import { ApiErrors } from '../openapi/api-docs.decorators';
import { DomainError, ErrorCode } from '@gateway/errors';

/**
 * `GET /v1/files/<key>`: generated media (images, videos). Public objects need nothing; private ones
 * need the `expires` and `signature` their URL was issued with, so the URL itself is the credential.
 */
@ApiTags('Files')
@Controller('files')
export class FilesController {
  constructor(
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
    private readonly urls: FileUrls,
  ) {}

  @Public()
  // Fastify's own wildcard: the key is everything after `/files/`.
  @Get('*')
  @ApiOperation({
    summary: 'Download a generated image or video',
    description:
      'URLs come from image and video results. A public object needs nothing; a private one needs the `expires` and `signature` its URL carries (valid for `FILE_URL_TTL_SECONDS`, default one hour).',
  })
  @ApiParam({ name: '*', description: 'The object key, e.g. `images/<uuid>.png`.', example: 'images/9b2f.png' })
  @ApiQuery({ name: 'expires', required: false, description: 'Unix seconds after which a private URL stops working.' })
  @ApiQuery({ name: 'signature', required: false, description: 'HMAC signature of a private URL.' })
  @ApiProduces('image/png', 'video/x-msvideo', 'application/octet-stream')
  @ApiResponse({ status: 200, description: 'The file.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors({ 403: 'A private file without a valid or unexpired signature.', 404: 'No such file.' })
  async download(
    @Param('*') key: string,
    @Query('expires') expires: unknown,
    @Query('signature') signature: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const path = key ?? '';
    if (!isValidObjectKey(path)) throw new DomainError(ErrorCode.NotFound, 'No such file');
    const object = await this.store.get(path);
    if (!object) throw new DomainError(ErrorCode.NotFound, 'No such file');
    if (!object.metadata.public) {
      const check = this.urls.check(path, expires, signature);
      if (check === 'expired') throw new DomainError(ErrorCode.Forbidden, 'This file URL has expired; request the file again');
      if (check === 'invalid') throw new DomainError(ErrorCode.Forbidden, 'This file is private: its URL needs a valid signature');
    }
    await reply
      .header('content-type', object.metadata.contentType)
      .header('cache-control', object.metadata.public ? 'public, max-age=86400, immutable' : 'private, no-store')
      .header('x-content-type-options', 'nosniff')
      .send(object.body);
  }
}
