/** Canonical response → a `Response` object (`openai` v6), the non-streaming reply; its pieces serve the stream too. */
import type { CanonicalResponse, ThinkingPart, TokenLogprob, ToolCall, ToolChoice, ToolDefinition, Usage } from '@gateway/canonical';
import {
  logprobsWithBytes,
  prefixedId,
  type RenderContext,
  responsesIncompleteReason,
  responsesItemIds,
  responsesUsage,
  visibleReasoning,
} from '../common/render-common';
import { responsesTextField } from '../common/response-format';

export function renderResponses(response: CanonicalResponse, context: RenderContext): object {
  const ids = responsesItemIds(response.id);
  const output: object[] = [];
  const reasoning = visibleReasoning(response.reasoning, context);
  // The item says that the model reasoned; its text, only when a summary was asked for.
  if (reasoning !== undefined) {
    const sealed = context.reasoningSeal?.seal(thinkingPart(response.reasoning ?? '', response.reasoningSignature));
    output.push(responsesReasoningItem(ids.reasoning(0), context.reasoningSummary === undefined ? '' : reasoning, sealed));
  }
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
    previous_response_id: context.previousResponseId ?? null,
    ...(context.conversationId ? { conversation: { id: context.conversationId } } : {}),
    reasoning: { effort: request.reasoning?.effort ?? null, summary: context.reasoningSummary ?? null },
    store: context.store ?? false,
    temperature: request.temperature ?? 1,
    text: responsesTextField(request.responseFormat),
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

/** `strict` as the client sent it; left out, OpenAI's Responses default for function tools, `true`. */
function responsesTool(tool: ToolDefinition): object {
  return { type: 'function', name: tool.name, description: tool.description ?? null, parameters: tool.parameters, strict: tool.strict ?? true };
}

/** `encryptedContent`: the reasoning sealed, when the client included `reasoning.encrypted_content`. */
export function responsesReasoningItem(id: string, text: string, encryptedContent?: string): object {
  const item: Record<string, unknown> = { id, type: 'reasoning', summary: text === '' ? [] : [{ type: 'summary_text', text }] };
  if (encryptedContent !== undefined) item.encrypted_content = encryptedContent;
  return item;
}

/** What a reasoning item seals: all the text the model reasoned (not only what is shown) and the upstream's signature. */
export function thinkingPart(text: string, signature: string | undefined): ThinkingPart {
  return signature === undefined ? { type: 'thinking', text } : { type: 'thinking', text, signature };
}

export function responsesOutputText(text: string, logprobs?: TokenLogprob[]): object {
  const part: Record<string, unknown> = { type: 'output_text', text, annotations: [] };
  if (logprobs) part.logprobs = logprobsWithBytes(logprobs);
  return part;
}

export function responsesMessageItem(id: string, text: string, status: 'in_progress' | 'completed', logprobs?: TokenLogprob[]): object {
  const content = status === 'in_progress' ? [] : [responsesOutputText(text, logprobs)];
  return { id, type: 'message', status, role: 'assistant', content };
}

export function responsesFunctionCallItem(id: string, call: Pick<ToolCall, 'id' | 'name'>, args: string, status: 'in_progress' | 'completed'): object {
  return { id, type: 'function_call', status, call_id: call.id, name: call.name, arguments: args };
}
