import type { ClientFormat } from '../client-format';
import { MessagesRequest } from './messages.schema';
import { anthropicErrorBody, messagesStreamErrorFrame } from './error-body';
import { parseMessagesRequest } from './parse-messages';
import { renderMessages } from './render-messages';
import { MessagesStreamEncoder } from './stream-messages';

/** Anthropic messages, `POST /v1/messages`. */
export const messagesFormat: ClientFormat = {
  requestSchema: MessagesRequest,
  parse: parseMessagesRequest,
  render: renderMessages,
  createStreamEncoder: (context) => new MessagesStreamEncoder(context),
  errorBody: anthropicErrorBody,
  streamErrorFrame: (error, requestId) => messagesStreamErrorFrame(error, requestId),
};
