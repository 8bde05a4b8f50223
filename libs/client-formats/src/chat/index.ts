import type { ClientFormat } from '../client-format';
import { ChatCompletionRequest } from './chat.schema';
import { chatStreamErrorFrame, openaiErrorBody } from './error-body';
import { parseChatRequest } from './parse-chat';
import { renderChat } from './render-chat';
import { ChatStreamEncoder } from './stream-chat';

/** OpenAI chat completions, `POST /v1/chat/completions`. */
export const chatFormat: ClientFormat = {
  requestSchema: ChatCompletionRequest,
  parse: parseChatRequest,
  render: renderChat,
  createStreamEncoder: (context) => new ChatStreamEncoder(context),
  errorBody: openaiErrorBody,
  streamErrorFrame: (error, requestId) => chatStreamErrorFrame(error, requestId),
};
