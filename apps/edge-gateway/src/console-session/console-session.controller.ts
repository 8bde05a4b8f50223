import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { INVALID_KEY_MESSAGE } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';
import { IsString, Length } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { assertAccess } from '../auth/access-policy';
import { Public } from '../auth/auth.decorators';
import { AuthCacheService } from '../auth/auth-cache.service';
import { EdgeEnv } from '../config/edge.env';
import { ConsoleSessions, SessionView } from './console-sessions';
import { clearSessionCookie, CSRF_HEADER, sessionToken, setSessionCookie } from './session-cookie';

export class ConsoleSignInDto {
  /** The API key to sign in with (master, proxy or DevPass); exchanged for the session, never stored in the browser. */
  @IsString()
  @Length(1, 512)
  key: string;
}

/**
 * Sign-in for the web console: a key is exchanged once for an opaque session in an HttpOnly,
 * SameSite=Strict cookie (docs/console.md). With that cookie and the `x-csrf-token` header, every
 * `/v1` route answers as it would to the key. Outside `/v1`: the console's own, not the model API,
 * so not in `/v1/openapi.json` (docs/api.md, "Console sessions", describes it).
 */
@ApiExcludeController()
@Controller('console/api/session')
@Public()
export class ConsoleSessionController {
  private readonly forceSecure: boolean;

  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly cache: AuthCacheService,
    @Inject(EdgeEnv) env: Pick<EdgeEnv, 'CONSOLE_COOKIE_SECURE'>,
  ) {
    this.forceSecure = env.CONSOLE_COOKIE_SECURE === 'true';
  }

  @Post()
  @HttpCode(201)
  async signIn(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: ConsoleSignInDto): Promise<SessionView> {
    this.assertSameOrigin(request);
    // Fresh from key-service: a sign-in is rare, and must not ride on a cached answer.
    const authenticated = await this.cache.reauthenticate(body.key);
    if (!authenticated) throw new DomainError(ErrorCode.Unauthenticated, INVALID_KEY_MESSAGE);
    assertAccess(authenticated.principal, authenticated.ipAllowlist, { ip: request.ip, nowSeconds: Math.floor(Date.now() / 1000) });
    const previous = sessionToken(request);
    if (previous) await this.sessions.end(previous);
    const { token, view } = await this.sessions.create(body.key, authenticated.principal.keyType);
    setSessionCookie(reply, token, this.secure(request));
    return view;
  }

  @Get()
  async describe(@Req() request: FastifyRequest): Promise<SessionView> {
    const token = sessionToken(request);
    const view = token ? await this.sessions.describe(token) : null;
    if (!view) throw new DomainError(ErrorCode.Unauthenticated, 'No console session: sign in');
    return view;
  }

  @Delete()
  @HttpCode(204)
  async signOut(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    const token = sessionToken(request);
    const csrf = request.headers[CSRF_HEADER];
    const session = token ? await this.sessions.resolve(token, typeof csrf === 'string' ? csrf : undefined) : null;
    if (session === null) throw new DomainError(ErrorCode.Unauthenticated, 'No console session: sign in');
    if (session === 'csrf') throw new DomainError(ErrorCode.Forbidden, `Signing out needs the session's CSRF token in the ${CSRF_HEADER} header`);
    await this.sessions.endById(session.id);
    clearSessionCookie(reply, this.secure(request));
  }

  /** A sign-in posted by another site's page (login CSRF) is refused: browsers name the page's origin. */
  private assertSameOrigin(request: FastifyRequest): void {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    if (origin !== `${request.protocol}://${request.host}`) {
      throw new DomainError(ErrorCode.Forbidden, `Sign-in is accepted from the console's own origin only; ${origin} is not it`);
    }
  }

  private secure(request: FastifyRequest): boolean {
    return this.forceSecure || request.protocol === 'https';
  }
}
