import { TextFormat } from '@gateway/contracts';
import { clientFormat } from '@gateway/client-formats';
import type { HttpError } from './error-formats';

/**
 * The last event of a text stream the edge has to end itself (the router went silent or away after
 * the headers were sent), in the client's format exactly as the router writes its own in-stream
 * errors; a 5xx carries the request id. `sequenceNumber` continues a responses stream's numbering.
 */
export function streamErrorFrame(format: TextFormat, error: HttpError, requestId: string, sequenceNumber: number): string {
  return clientFormat(format).streamErrorFrame(error, requestId, sequenceNumber);
}
