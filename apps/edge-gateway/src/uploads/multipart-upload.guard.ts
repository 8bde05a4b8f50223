import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { assertAccess } from '../auth/access-policy';
import type { AuthenticatedRequest } from '../auth/auth.decorators';
import { EdgeEnv } from '../config/edge.env';
import { MULTIPART_UPLOAD, type UploadSpec } from './multipart-upload.decorator';
import { MultipartUploads } from './multipart-uploads.service';

/**
 * Between authentication and admission, for `@MultipartUpload` routes: stages the body's files
 * (`MultipartUploads`) and makes the rest the request's body, so that admission prices and reserves
 * it like any JSON route. The model is named inside the body, so the key's model scope (a proxy
 * key's whitelist, the DevPass rule) is checked here, once it is known. The staged files are
 * deleted when the response ends, whatever it was (the router deletes them too, after its call).
 */
@Injectable()
export class MultipartUploadGuard implements CanActivate {
  private readonly specs = new WeakMap<object, UploadSpec | null>();

  constructor(
    private readonly reflector: Reflector,
    private readonly uploads: MultipartUploads,
    @Inject(EdgeEnv) private readonly env: EdgeEnv,
  ) {}

  /** Synchronous (no promise, no extra turn) on every route without `@MultipartUpload`: the hot path. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const spec = this.specOf(context.getHandler());
    if (!spec) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    if (!request.principal) return true;
    return this.stage(request, http.getResponse<FastifyReply>(), spec);
  }

  private async stage(request: AuthenticatedRequest, reply: FastifyReply, spec: UploadSpec): Promise<boolean> {
    const staged = await this.uploads.stage(request, spec);
    reply.raw.once('close', () => void this.uploads.discard(staged.keys));
    request.body = staged.body;
    const model = typeof staged.body.model === 'string' ? staged.body.model : undefined;
    assertAccess(request.principal, request.ipAllowlist, { ip: request.ip, model, nowSeconds: Math.floor(Date.now() / 1000) });
    return true;
  }

  private specOf(handler: object): UploadSpec | null {
    let spec = this.specs.get(handler);
    if (spec === undefined) {
      const make = this.reflector.get<((env: EdgeEnv) => UploadSpec) | undefined>(MULTIPART_UPLOAD, handler as () => void);
      spec = make ? make(this.env) : null;
      this.specs.set(handler, spec);
    }
    return spec;
  }
}
