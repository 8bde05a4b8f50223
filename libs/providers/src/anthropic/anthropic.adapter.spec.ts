import type { CanonicalStreamEvent } from '@gateway/canonical';
import { UpstreamError, type UpstreamRoute } from '../provider-adapter';
import { canonicalRequest, weatherTool } from '../testing/canonical-fixtures';
import { collect, sendJson, sendSse, startFakeUpstream, type FakeUpstream, type SseEvent } from '../testing/fake-upstream';
import { AnthropicAdapter, messagesUrl } from './anthropic.adapter';

/** An SSE event as Anthropic sends it: the event name repeated as `type` in the data. */
const sse = (data: { type: string } & Record<string, unknown>): SseEvent => ({ event: data.type, data });

const messageStart = sse({
  type: 'message_start',
  message: { id: 'msg_s', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 15, output_tokens: 1 } },
});

describe('AnthropicAdapter', () => {
  let upstream: FakeUpstream;
  let adapter: AnthropicAdapter;
  let route: UpstreamRoute;
  const signal = () => new AbortController().signal;

  beforeEach(async () => {
    upstream = await startFakeUpstream();
    adapter = new AnthropicAdapter();
    route = { adapter: 'anthropic', baseUrl: upstream.baseUrl, upstreamModel: 'claude-test', apiKey: 'sk-ant-test' };
  });

  afterEach(async () => {
    await adapter.close();
    await upstream.close();
  });

  it('posts to /v1/messages with the Anthropic headers and maps the message', async () => {
    upstream.handle((_request, response) =>
      sendJson(response, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'Bonjour.' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 11, output_tokens: 3 },
      }),
    );
    const response = await adapter.complete(route, canonicalRequest({ system: 'Be French.' }), signal());
    expect(response).toMatchObject({ id: 'msg_1', model: 'public-model', text: 'Bonjour.', stopReason: 'stop', usage: { inputTokens: 11, outputTokens: 3 } });
    const [sent] = upstream.requests;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body).toEqual({
      model: 'claude-test',
      system: 'Be French.',
      max_tokens: 4096,
      stream: false,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
    });
  });

  it("sends the client's beta flags as anthropic-beta, and none when it sent none", async () => {
    upstream.handle((_request, response) =>
      sendJson(response, 200, { id: 'm', content: [], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }),
    );
    await adapter.complete(route, canonicalRequest({ betas: ['interleaved-thinking-2025-05-14', 'thinking-display-updates-2026-08-18'] }), signal());
    await adapter.complete(route, canonicalRequest(), signal());
    expect(upstream.requests[0].headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14,thinking-display-updates-2026-08-18');
    expect(upstream.requests[1].headers['anthropic-beta']).toBeUndefined();
  });

  it('does not double /v1 in the base URL', async () => {
    upstream.handle((_request, response) =>
      sendJson(response, 200, { id: 'm', content: [], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }),
    );
    await adapter.complete({ ...route, baseUrl: `${upstream.baseUrl}/v1/` }, canonicalRequest(), signal());
    expect(upstream.requests[0].url).toBe('/v1/messages');
    expect(messagesUrl({ adapter: 'anthropic', upstreamModel: 'x' })).toBe('https://api.anthropic.com/v1/messages');
  });

  it('streams a thinking block with its signature, then text', async () => {
    upstream.handle((_request, response) =>
      sendSse(response, [
        messageStart,
        sse({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user greets me.' } }),
        sse({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCkYIBxgC' } }),
        sse({ type: 'content_block_stop', index: 0 }),
        sse({ type: 'ping' }),
        sse({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
        sse({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hello' } }),
        sse({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '!' } }),
        sse({ type: 'content_block_stop', index: 1 }),
        sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 42 } }),
        sse({ type: 'message_stop' }),
      ]),
    );
    const request = canonicalRequest({ stream: true, reasoning: { enabled: true, budgetTokens: 2048, exclude: false } });
    const events = await collect(adapter.stream(route, request, signal()));
    expect(events).toEqual([
      { type: 'start', id: 'msg_s', model: 'public-model', created: expect.any(Number), usage: { inputTokens: 15, outputTokens: 1 } },
      { type: 'reasoning_delta', text: 'The user greets me.' },
      { type: 'reasoning_signature', signature: 'EqQBCkYIBxgC' },
      { type: 'text_delta', text: 'Hello' },
      { type: 'text_delta', text: '!' },
      { type: 'finish', stopReason: 'stop' },
      { type: 'usage', usage: { inputTokens: 15, outputTokens: 42 } },
    ]);
    expect(upstream.requests[0].body).toMatchObject({ stream: true, thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 4096 });
  });

  it('streams a tool call with input_json deltas', async () => {
    upstream.handle((_request, response) =>
      sendSse(response, [
        messageStart,
        sse({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } }),
        sse({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } }),
        sse({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city": "Ber' } }),
        sse({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'lin"}' } }),
        sse({ type: 'content_block_stop', index: 0 }),
        sse({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } }),
        sse({ type: 'message_stop' }),
      ]),
    );
    const events = await collect(adapter.stream(route, canonicalRequest({ tools: [weatherTool] }), signal()));
    expect(events.slice(1)).toEqual([
      { type: 'tool_call_start', index: 0, id: 'toolu_1', name: 'get_weather' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '{"city": "Ber' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: 'lin"}' },
      { type: 'finish', stopReason: 'tool_calls' },
      { type: 'usage', usage: { inputTokens: 15, outputTokens: 20 } },
    ]);
  });

  it('throws a retryable UpstreamError for an overloaded error event mid-stream', async () => {
    upstream.handle((_request, response) =>
      sendSse(response, [messageStart, sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })]),
    );
    const seen: CanonicalStreamEvent[] = [];
    const run = (async () => {
      for await (const event of adapter.stream(route, canonicalRequest(), signal())) seen.push(event);
    })();
    await expect(run).rejects.toMatchObject({ status: 529, retryable: true, message: 'Overloaded' });
    expect(seen.map((event) => event.type)).toEqual(['start']);
  });

  it('maps a 500 to a retryable and a 400 to a non-retryable UpstreamError with the upstream message', async () => {
    upstream.handle((_request, response) => sendJson(response, 500, { type: 'error', error: { type: 'api_error', message: 'Internal server error' } }));
    const error = await adapter.complete(route, canonicalRequest(), signal()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 500, retryable: true, message: 'Internal server error' });

    const body = { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } };
    upstream.handle((_request, response) => sendJson(response, 400, body));
    await expect(adapter.complete(route, canonicalRequest(), signal())).rejects.toMatchObject({
      status: 400,
      retryable: false,
      message: 'max_tokens: Field required',
      body,
    });
    await expect(collect(adapter.stream(route, canonicalRequest(), signal()))).rejects.toMatchObject({ status: 400, retryable: false });
  });

  it('maps a timeout signal to a retryable status-0 UpstreamError', async () => {
    upstream.handle(() => undefined); // never answers
    await expect(adapter.complete(route, canonicalRequest(), AbortSignal.timeout(50))).rejects.toMatchObject({ status: 0, retryable: true });
  });
});
