import { type Static, Type } from 'typebox';
import { RequestIdField } from '../chat/error-body';
import { withRequestId, type WireError } from '../common/wire-error';

export const DetailErrorBody = Type.Object(
  { detail: Type.String({ description: 'What went wrong, e.g. `Proxy key not found`.' }), request_id: RequestIdField },
  { description: 'Error body of the key routes (`/v1/auth/…`).' },
);
export type DetailErrorBody = Static<typeof DetailErrorBody>;

/** The spec's proxy-key error body (`/v1/auth/*`): `{detail}`, plus `request_id` on a 5xx. */
export function detailErrorBody(error: WireError, requestId?: string): DetailErrorBody {
  return withRequestId({ detail: error.message }, error.status, requestId);
}
