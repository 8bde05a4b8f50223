import type { TextFormat } from '@gateway/contracts';
import { chatFormat } from './chat';
import type { ClientFormat } from './client-format';
import { messagesFormat } from './messages';
import { responsesFormat } from './responses';

/** Every client format by name: a new format is one folder plus one line here (and its name in `TextFormats`). */
export const CLIENT_FORMATS: Record<TextFormat, ClientFormat> = {
  chat: chatFormat,
  responses: responsesFormat,
  messages: messagesFormat,
};

export function clientFormat(format: TextFormat): ClientFormat {
  return CLIENT_FORMATS[format];
}
