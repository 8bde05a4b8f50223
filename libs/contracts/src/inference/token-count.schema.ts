/** The token-counting answers the router builds, one per format that has the route. */
import { type Static, Type } from 'typebox';
import { Literals } from '../schema/schema-helpers';

export const MessagesTokenCount = Type.Object(
  { input_tokens: Type.Integer({ description: 'Input tokens of the body (system, messages and tools), as a generation would be billed them.' }) },
  { description: "Anthropic's `MessageTokensCount`." },
);
export type MessagesTokenCount = Static<typeof MessagesTokenCount>;

export const ResponsesInputTokens = Type.Object(
  {
    object: Literals(['response.input_tokens']),
    input_tokens: Type.Integer({ description: 'Input tokens of the body (instructions, input and tools), as a generation would be billed them.' }),
  },
  { description: "OpenAI's `InputTokenCountResponse`." },
);
export type ResponsesInputTokens = Static<typeof ResponsesInputTokens>;
