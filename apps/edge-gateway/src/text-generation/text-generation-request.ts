import { TextFormat, TextGenerationRequest } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';
import { AuthenticatedRequest } from '../auth/auth.decorators';
import { callerContext } from '../auth/caller-context';

/**
 * What the router is asked for a text body (a generation or a token count): who calls, the
 * client's body as sent and, on messages, the `anthropic-beta` header's flags, which Anthropic
 * upstreams need beside the body they steer (a display mode behind a beta, say).
 */
export function textGenerationRequest(format: TextFormat, request: AuthenticatedRequest): TextGenerationRequest {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new DomainError(ErrorCode.InvalidRequest, 'Request body must be a JSON object');
  }
  const betas = format === 'messages' ? betaFlags(request.headers['anthropic-beta']) : [];
  return { ...callerContext(request), format, body: body as Record<string, unknown>, ...(betas.length > 0 ? { betas } : {}) };
}

/** `anthropic-beta: a,b` (the header may also be repeated), as a list of flags. */
function betaFlags(header: string | string[] | undefined): string[] {
  return ([] as string[])
    .concat(header ?? [])
    .flatMap((value) => value.split(','))
    .map((flag) => flag.trim())
    .filter((flag) => flag !== '');
}
