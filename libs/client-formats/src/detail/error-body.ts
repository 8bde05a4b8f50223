import { withRequestId, type WireError } from '../common/wire-error';

/** The spec's proxy-key error body (`/v1/auth/*`): `{detail}`, plus `request_id` on a 5xx. */
export function detailErrorBody(error: WireError, requestId?: string): Record<string, unknown> {
  return withRequestId({ detail: error.message }, error.status, requestId);
}
