import { CallerContext } from '@gateway/contracts';
import { AuthenticatedRequest } from './auth.decorators';
import { clientRequestId } from '../http/client-request-id';
import { normalizeIp } from './ip-allowlist';

/** Who is calling, as the back-end services meter it: never the key itself, only its id and mask. */
export function callerContext(request: AuthenticatedRequest): CallerContext {
  const { principal } = request;
  const clientId = clientRequestId(request);
  return {
    accountId: principal.accountId,
    keyId: principal.keyId,
    keyType: principal.keyType,
    maskedKey: principal.maskedKey,
    ip: normalizeIp(request.ip),
    requestId: String(request.id),
    ...(clientId ? { clientRequestId: clientId } : {}),
    ...(request.admittedAt === undefined ? {} : { admittedAt: request.admittedAt }),
  };
}
