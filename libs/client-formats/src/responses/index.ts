import { openaiErrorBody } from '../chat/error-body';
import type { ClientFormat } from '../client-format';
import { ResponsesRequest } from './responses.schema';
import { responsesStreamErrorFrame } from './error-body';
import { parseResponsesRequest } from './parse-responses';
import { renderResponses } from './render-responses';
import { resolveStoredReferences, storedReferences, storedResponseId } from './stored-state';
import { ResponsesStreamEncoder } from './stream-responses';

/** OpenAI responses, `POST /v1/responses`. */
export const responsesFormat: ClientFormat = {
  requestSchema: ResponsesRequest,
  parse: parseResponsesRequest,
  render: renderResponses,
  createStreamEncoder: (context) => new ResponsesStreamEncoder(context),
  errorBody: openaiErrorBody,
  streamErrorFrame: responsesStreamErrorFrame,
  storedState: { responseId: storedResponseId, references: storedReferences, resolve: resolveStoredReferences },
};
