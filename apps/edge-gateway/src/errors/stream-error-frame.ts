import { TextFormat } from '@gateway/contracts';
import { errorBody, HttpError } from './error-formats';

const frame = (event: string | undefined, payload: unknown): string =>
  `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(payload)}\n\n`;

/**
 * The last event of a text stream the edge has to end itself (the router went silent or away after
 * the headers were sent), in the client's format as the router writes its own in-stream errors;
 * a 5xx carries the request id. `sequenceNumber` continues a responses stream's numbering.
 */
export function streamErrorFrame(format: TextFormat, error: HttpError, requestId: string, sequenceNumber: number): string {
  switch (format) {
    case 'chat':
      return frame(undefined, errorBody('openai', error, requestId));
    case 'messages':
      return frame('error', errorBody('anthropic', error, requestId));
    case 'responses': {
      const body = { type: 'error', code: error.code ?? 'server_error', message: error.message, param: null, sequence_number: sequenceNumber };
      return frame('error', error.status >= 500 ? { ...body, request_id: requestId } : body);
    }
  }
}
