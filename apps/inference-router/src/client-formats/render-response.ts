/**
 * Canonical response → the reply body of each client format (non-streaming).
 *
 * The shapes follow the official SDK types (`openai` v6 `ChatCompletion` / `Response`,
 * `@anthropic-ai/sdk` `Message`), so typed clients find every field they expect.
 */
import type { CanonicalResponse, ClientFormat, ToolCall, ToolChoice, ToolDefinition, Usage, TokenLogprob } from '../canonical/canonical.types';
import {
  chatFinishReason,
  chatUsage,
  logprobsWithBytes,
  messagesStopReason,
  messagesUsage,
  prefixedId,
  type RenderContext,
  responsesIncompleteReason,
  responsesItemIds,
  responsesUsage,
  toolInput,
} from './render-common';

export type { RenderContext } from './render-common';

export function renderResponse(format: ClientFormat, response: CanonicalResponse, context: RenderContext): object {
  switch (format) {
    case 'chat':
      return renderChat(response, context);
    case 'responses':
      return renderResponses(response, context);
    case 'messages':
      return renderMessages(response, context);
  }
}

/** Whether reasoning text should reach the client. */
function visibleReasoning(reasoning: string | undefined, context: RenderContext): string | undefined {
  return context.excludeReasoning || !reasoning ? undefined : reasoning;
}

// ---- chat -------------------------------------------------------------------------------------

function renderChat(response: CanonicalResponse, context: RenderContext): object {
  return {
    id: response.id,
    object: 'chat.completion',
    created: response.created,
    model: response.model,
    choices: [
      {
        index: 0,
        message: chatMessage(response, context),
        logprobs: response.logprobs ? { content: logprobsWithBytes(response.logprobs), refusal: null } : null,
        finish_reason: chatFinishReason(response.stopReason),
      },
    ],
    usage: chatUsage(response.usage),
  };
}

function chatMessage(response: CanonicalResponse, context: RenderContext): object {
  const hasToolCalls = response.toolCalls.length > 0;
  const message: Record<string, unknown> = {
    role: 'assistant',
    // OpenAI sends null content on a pure tool-call turn; clients test for it.
    content: hasToolCalls && response.text === '' ? null : response.text,
    refusal: null,
  };
  const reasoning = visibleReasoning(response.reasoning, context);
  if (reasoning !== undefined) {
    message.reasoning = reasoning;
    if (context.reasoningContentCompat) message.reasoning_content = reasoning;
  }
  if (hasToolCalls) message.tool_calls = response.toolCalls.map(chatToolCall);
  return message;
}

function chatToolCall(call: ToolCall): object {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

// ---- responses --------------------------------------------------------------------------------

function renderResponses(response: CanonicalResponse, context: RenderContext): object {
  const ids = responsesItemIds(response.id);
  const output: object[] = [];
  const reasoning = visibleReasoning(response.reasoning, context);
  if (reasoning !== undefined) output.push(responsesReasoningItem(ids.reasoning(0), reasoning));
  // A message item carries the text; a reply of only tool calls has none.
  if (response.text !== '' || response.toolCalls.length === 0) {
    output.push(responsesMessageItem(ids.message(0), response.text, 'completed', response.logprobs));
  }
  response.toolCalls.forEach((call, i) => output.push(responsesFunctionCallItem(ids.functionCall(i), call, call.arguments, 'completed')));
  return responsesEnvelope(
    { id: response.id, createdAt: response.created, model: response.model, output, stopReason: response.stopReason, usage: response.usage },
    context,
  );
}

export interface ResponsesEnvelopeFields {
  id: string;
  createdAt: number;
  model: string;
  output: object[];
  /** Absent while the response is still being generated (stream `response.created`). */
  stopReason?: CanonicalResponse['stopReason'];
  usage?: Usage;
}

/** The `Response` object around the output items, echoing the request's settings as OpenAI does. */
export function responsesEnvelope(fields: ResponsesEnvelopeFields, context: RenderContext): object {
  const { request } = context;
  const incomplete = fields.stopReason ? responsesIncompleteReason(fields.stopReason) : undefined;
  const status = !fields.stopReason ? 'in_progress' : incomplete ? 'incomplete' : 'completed';
  return {
    id: prefixedId('resp_', fields.id),
    object: 'response',
    created_at: fields.createdAt,
    status,
    error: null,
    incomplete_details: incomplete ? { reason: incomplete } : null,
    instructions: request.system ?? null,
    max_output_tokens: request.maxTokens ?? null,
    model: fields.model,
    output: fields.output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: null },
    store: false,
    temperature: request.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: responsesToolChoice(request.toolChoice),
    tools: (request.tools ?? []).map(responsesTool),
    top_p: request.topP ?? 1,
    truncation: 'disabled',
    usage: fields.usage ? responsesUsage(fields.usage) : null,
    user: request.user ?? null,
    metadata: context.metadata ?? {},
  };
}

function responsesToolChoice(choice: ToolChoice | undefined): unknown {
  if (choice === undefined) return 'auto';
  return typeof choice === 'string' ? choice : { type: 'function', name: choice.name };
}

function responsesTool(tool: ToolDefinition): object {
  return { type: 'function', name: tool.name, description: tool.description ?? null, parameters: tool.parameters, strict: false };
}

export function responsesReasoningItem(id: string, text: string): object {
  return { id, type: 'reasoning', summary: text === '' ? [] : [{ type: 'summary_text', text }] };
}

export function responsesOutputText(text: string, logprobs?: TokenLogprob[]): object {
  const part: Record<string, unknown> = { type: 'output_text', text, annotations: [] };
  if (logprobs) part.logprobs = logprobsWithBytes(logprobs);
  return part;
}

export function responsesMessageItem(
  id: string,
  text: string,
  status: 'in_progress' | 'completed',
  logprobs?: TokenLogprob[],
): object {
  const content = status === 'in_progress' ? [] : [responsesOutputText(text, logprobs)];
  return { id, type: 'message', status, role: 'assistant', content };
}

export function responsesFunctionCallItem(
  id: string,
  call: Pick<ToolCall, 'id' | 'name'>,
  args: string,
  status: 'in_progress' | 'completed',
): object {
  return { id, type: 'function_call', status, call_id: call.id, name: call.name, arguments: args };
}

// ---- messages ---------------------------------------------------------------------------------

function renderMessages(response: CanonicalResponse, context: RenderContext): object {
  const content: object[] = [];
  const reasoning = visibleReasoning(response.reasoning, context);
  if (reasoning !== undefined) content.push(messagesThinkingBlock(reasoning, response.reasoningSignature));
  // Keep a text block on a reply with no tool calls, even an empty one: many clients read content[0].text.
  if (response.text !== '' || response.toolCalls.length === 0) content.push({ type: 'text', text: response.text });
  for (const call of response.toolCalls) content.push(messagesToolUseBlock(call, toolInput(call.arguments)));
  return {
    id: prefixedId('msg_', response.id),
    type: 'message',
    role: 'assistant',
    model: response.model,
    content,
    stop_reason: messagesStopReason(response.stopReason),
    stop_sequence: response.stopReason === 'stop_sequence' ? (response.stopSequence ?? null) : null,
    usage: messagesUsage(response.usage),
  };
}

/** A thinking block; `signature` is required by the SDK type, so it is '' for non-Anthropic reasoning. */
export function messagesThinkingBlock(thinking: string, signature: string | undefined): object {
  return { type: 'thinking', thinking, signature: signature ?? '' };
}

export function messagesToolUseBlock(call: Pick<ToolCall, 'id' | 'name'>, input: Record<string, unknown>): object {
  return { type: 'tool_use', id: call.id, name: call.name, input };
}
