/**
 * Client request body (any of the three formats) → canonical request.
 *
 * Returns a wrapper rather than a bare `CanonicalRequest`: a few client-format facts
 * (`reasoning_content_compat`, responses `metadata`) are needed when rendering the reply but have
 * no place in the provider-neutral request.
 */
import type { ClientFormat } from '../canonical/canonical.types';
import { parseChatRequest } from './parse-chat';
import type { ParsedClientRequest, ParseOptions } from './parse-common';
import { parseMessagesRequest } from './parse-messages';
import { parseResponsesRequest } from './parse-responses';

export type { ParsedClientRequest, ParseOptions } from './parse-common';
export { RequestValidationError } from './validate';

/**
 * Validates `body` and converts it. Throws `RequestValidationError` (status 400, `param` = dotted
 * path of the offending field) on the first problem found.
 */
export function parseClientRequest(format: ClientFormat, body: unknown, options: ParseOptions): ParsedClientRequest {
  switch (format) {
    case 'chat':
      return parseChatRequest(body, options);
    case 'responses':
      return parseResponsesRequest(body, options);
    case 'messages':
      return parseMessagesRequest(body, options);
  }
}
