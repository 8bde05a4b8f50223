import { parse, serialize } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The console session's cookie: its value is the session token, nothing else. */
export const SESSION_COOKIE = 'gateway_console';
/** The header every call made with a session carries: the CSRF token the session was issued with. */
export const CSRF_HEADER = 'x-csrf-token';

/** The session token from the request's cookie, when there is one. */
export function sessionToken(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || !header.includes(SESSION_COOKIE)) return undefined;
  return parse(header)[SESSION_COOKIE] || undefined;
}

/**
 * HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), Path=/ (the
 * console's API is the edge's `/v1`), Secure when the request came over TLS (itself, or through a
 * trusted proxy saying so) or `CONSOLE_COOKIE_SECURE=true`. No Max-Age: the browser drops it when
 * closed; the server's expiries end it sooner.
 */
export function setSessionCookie(reply: FastifyReply, token: string, secure: boolean): void {
  void reply.header('set-cookie', serialize(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', path: '/', secure }));
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  void reply.header('set-cookie', serialize(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/', secure, maxAge: 0 }));
}
