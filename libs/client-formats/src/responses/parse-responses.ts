/**
 * OpenAI Responses request body → canonical request. `ResponsesRequest` (responses.schema.ts)
 * checks the body; what is left here is what a schema cannot say.
 *
 * Everything the model should see is in `input`: a string, or the flat item list OpenAI's SDKs send
 * (messages, function calls and their outputs, reasoning items replayed from an earlier response).
 * `previous_response_id` and `item_reference` items refer to stored responses: the router replaces
 * them with the stored items (`stored-state.ts`) before this parse sees the body.
 */
import type { CanonicalRequest, ContentPart, ToolChoice } from '@gateway/canonical';
import { ConversationBuilder } from '../common/conversation';
import { responsesTextFormat } from '../common/response-format';
import { functionDefinition } from '../chat/parse-chat';
import { buildReasoning, compact, effortSignals, type ParsedClientRequest, type ParseOptions, type ReasoningSignals } from '../common/parse-common';
import { compileRequestValidator } from '../common/schema';
import { fail, path } from '../common/validate';
import { type ResponsesContentPart, type ResponsesInputItem, ResponsesRequest } from './responses.schema';

const validate = compileRequestValidator(ResponsesRequest);

export function parseResponsesRequest(body: unknown, options: ParseOptions): ParsedClientRequest {
  const b = validate(body);
  const conversation = new ConversationBuilder();
  if (b.instructions !== undefined && b.instructions !== null) conversation.addSystem(b.instructions);
  if (typeof b.input === 'string') conversation.addUser([{ type: 'text', text: b.input }]);
  else b.input.forEach((item, i) => addItem(conversation, item, path('input', i), options));

  const request: CanonicalRequest = compact({
    model: b.model,
    system: conversation.system,
    messages: conversation.messages,
    maxTokens: b.max_output_tokens ?? undefined,
    temperature: b.temperature ?? undefined,
    topP: b.top_p ?? undefined,
    tools: b.tools?.flatMap((tool) =>
      tool.type !== 'function' ? [] : [functionDefinition(tool.function ?? (tool as Parameters<typeof functionDefinition>[0]))],
    ),
    toolChoice: toolChoice(b.tool_choice),
    reasoning: buildReasoning(reasoningSignals(b.reasoning), options),
    stream: b.stream ?? false,
    // Responses ask for logprobs through `include: ['message.output_text.logprobs']`.
    logprobs: b.include?.includes('message.output_text.logprobs') || undefined,
    topLogprobs: b.top_logprobs ?? undefined,
    user: b.user ?? b.safety_identifier ?? undefined,
    responseFormat: responsesTextFormat(b.text?.format),
  });
  if (request.messages.length === 0) fail('input', 'must contain at least one message');
  return {
    request,
    reasoningContentCompat: false,
    metadata: b.metadata ?? undefined,
    store: b.store ?? true,
    previousResponseId: b.previous_response_id ?? undefined,
    reasoningSummary: summaryKind(b.reasoning?.summary),
    encryptedReasoning: b.include?.includes('reasoning.encrypted_content') || undefined,
  };
}

/** The summary asked for: a kind (one the gateway does not know included), or `true`, the spec's boolean form of `auto`. */
function summaryKind(summary: NonNullable<ResponsesRequest['reasoning']>['summary'] | undefined): string | undefined {
  if (summary === true) return 'auto';
  return typeof summary === 'string' ? summary : undefined;
}

function addItem(conversation: ConversationBuilder, item: ResponsesInputItem, at: string, options: ParseOptions): void {
  switch (item.type) {
    case 'function_call':
      conversation.appendToAssistant([], [{ id: item.call_id, name: item.name, arguments: item.arguments }]);
      return;
    case 'function_call_output':
      return addFunctionOutput(conversation, item.call_id, item.output);
    case 'reasoning': {
      // Replayed reasoning from an earlier turn opens that assistant turn. Our own
      // `encrypted_content` holds all of it (the text a summary may leave out, the upstream's
      // signature), so it wins over the summary; without a seal to open it, it adds nothing.
      if (item.encrypted_content && options.reasoningSeal) {
        const part = options.reasoningSeal.unseal(item.encrypted_content, path(at, 'encrypted_content'));
        if (part.text || part.signature) conversation.appendToAssistant([part]);
        return;
      }
      const summary = item.summary ?? [];
      const text = (summary.length > 0 ? summary : (item.content ?? [])).map((part) => part.text).join('\n\n');
      if (text) conversation.appendToAssistant([{ type: 'thinking', text }]);
      return;
    }
    default: {
      const parts = contentParts(item.content);
      if (item.role === 'system' || item.role === 'developer') conversation.addSystem(textOf(parts, path(at, 'content')));
      else if (item.role === 'assistant') conversation.appendToAssistant(parts.filter((p) => p.type !== 'text' || p.text !== ''));
      else conversation.addUser(parts);
    }
  }
}

/** Message content: a string, or input/output parts (assistant history uses `output_text`). */
function contentParts(value: string | ResponsesContentPart[]): ContentPart[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  return value.map((part) => {
    if (part.type === 'refusal') return { type: 'text', text: part.refusal };
    if (part.type === 'input_image') return { type: 'image', url: part.image_url };
    return { type: 'text', text: part.text };
  });
}

/** System text must be plain text. */
function textOf(parts: ContentPart[], at: string): string {
  return parts.map((p, i) => (p.type === 'text' ? p.text : fail(path(at, i, 'type'), 'system and developer messages may only contain text'))).join('');
}

function addFunctionOutput(conversation: ConversationBuilder, callId: string, output: string | ResponsesContentPart[]): void {
  if (typeof output === 'string') {
    conversation.addToolResult(callId, output);
    return;
  }
  const parts = contentParts(output);
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
  conversation.addToolResult(
    callId,
    text,
    undefined,
    parts.filter((p) => p.type === 'image'),
  );
}

function toolChoice(value: ResponsesRequest['tool_choice']): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  return { name: (value.function?.name ?? value.name) as string };
}

/**
 * `reasoning: {effort?, summary?}` asks for reasoning. A `summary` of `false` (the spec's boolean
 * form) asks for it not to be returned.
 */
function reasoningSignals(reasoning: ResponsesRequest['reasoning']): ReasoningSignals {
  if (!reasoning) return {};
  const signals: ReasoningSignals = { enabled: true, ...effortSignals(reasoning.effort) };
  if (typeof reasoning.summary === 'boolean') signals.exclude = !reasoning.summary;
  return signals;
}
