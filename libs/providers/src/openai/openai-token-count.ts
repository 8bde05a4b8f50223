import type { CanonicalMessage, CanonicalRequest, ContentPart } from '@gateway/canonical';

/**
 * The body of OpenAI's `POST /v1/responses/input_tokens`: the request as Responses input items
 * (the adapter otherwise speaks Chat Completions, which has no counting endpoint).
 */
export function toOpenAICountRequest(request: CanonicalRequest, upstreamModel: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: upstreamModel, input: request.messages.flatMap(toInputItems) };
  if (request.system) body.instructions = request.system;
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: tool.parameters,
    }));
  }
  if (request.reasoning?.effort) body.reasoning = { effort: request.reasoning.effort };
  return body;
}

function toInputItems(message: CanonicalMessage): object[] {
  switch (message.role) {
    case 'system':
      return [{ role: 'system', content: message.content }];
    case 'user':
      return [{ role: 'user', content: message.content.flatMap(userPart) }];
    case 'assistant': {
      const text = message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      const items: object[] = text ? [{ role: 'assistant', content: [{ type: 'output_text', text }] }] : [];
      for (const call of message.toolCalls ?? []) items.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
      return items;
    }
    case 'tool':
      return [{ type: 'function_call_output', call_id: message.toolCallId, output: message.content }];
  }
}

function userPart(part: ContentPart): object[] {
  if (part.type === 'text') return [{ type: 'input_text', text: part.text }];
  if (part.type === 'image') {
    const url = part.url ?? (part.data ? `data:${part.mediaType ?? 'image/png'};base64,${part.data}` : undefined);
    return url ? [{ type: 'input_image', image_url: url, detail: 'auto' }] : [];
  }
  return [];
}
