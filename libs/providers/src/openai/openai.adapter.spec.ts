import { encode } from 'gpt-tokenizer';
import type { CanonicalStreamEvent } from '@gateway/canonical';
import { UpstreamError, type UpstreamRoute } from '../provider-adapter';
import { canonicalRequest, weatherTool } from '../testing/canonical-fixtures';
import { collect, sendJson, sendSse, startFakeUpstream, type FakeUpstream } from '../testing/fake-upstream';
import { chatCompletionsUrl, OpenAIAdapter } from './openai.adapter';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-s1',
  object: 'chat.completion.chunk',
  created: 1700000100,
  model: 'gpt-test',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('OpenAIAdapter', () => {
  let upstream: FakeUpstream;
  let adapter: OpenAIAdapter;
  let route: UpstreamRoute;
  const signal = () => new AbortController().signal;

  beforeEach(async () => {
    upstream = await startFakeUpstream();
    adapter = new OpenAIAdapter();
    route = { adapter: 'openai', baseUrl: `${upstream.baseUrl}/v1/`, upstreamModel: 'gpt-test', apiKey: 'sk-test' };
  });

  afterEach(async () => {
    await adapter.close();
    await upstream.close();
  });

  it('posts a chat completion with the key and maps the answer', async () => {
    upstream.handle((_request, response) =>
      sendJson(response, 200, {
        id: 'chatcmpl-1',
        created: 1700000000,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 9, completion_tokens: 2 },
      }),
    );
    const response = await adapter.complete(route, canonicalRequest({ maxTokens: 50 }), signal());
    expect(response).toMatchObject({ id: 'chatcmpl-1', model: 'public-model', text: 'Hi!', stopReason: 'stop', usage: { inputTokens: 9, outputTokens: 2 } });
    const [sent] = upstream.requests;
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers['authorization']).toBe('Bearer sk-test');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body).toMatchObject({ model: 'gpt-test', stream: false, max_tokens: 50, messages: [{ role: 'user', content: 'Hello there' }] });
  });

  it('reuses one keep-alive connection across requests, streamed ones included', async () => {
    upstream.handle((request, response) =>
      (request.body as { stream: boolean }).stream
        ? sendSse(response, [{ data: chunk({ content: 'ok' }, 'stop') }, { data: '[DONE]' }])
        : sendJson(response, 200, { choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } }),
    );
    await adapter.complete(route, canonicalRequest(), signal());
    // undici frees the socket just after the body ends; a request issued in that instant opens a second one.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await collect(adapter.stream(route, canonicalRequest(), signal()));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await adapter.complete(route, canonicalRequest(), signal());
    expect(upstream.requests).toHaveLength(3);
    expect(new Set(upstream.requests.map((request) => request.remotePort)).size).toBe(1);
  });

  it('streams text and usage, asking for usage', async () => {
    upstream.handle((_request, response) =>
      sendSse(response, [
        { data: chunk({ role: 'assistant', content: '' }) },
        { data: chunk({ content: 'Hello' }) },
        { data: chunk({ content: ' world' }) },
        { data: chunk({}, 'stop') },
        { data: { ...chunk({}), choices: [], usage: { prompt_tokens: 7, completion_tokens: 2 } } },
        { data: '[DONE]' },
      ]),
    );
    const events = await collect(adapter.stream(route, canonicalRequest({ stream: true }), signal()));
    expect(events).toEqual([
      { type: 'start', id: 'chatcmpl-s1', model: 'public-model', created: 1700000100 },
      { type: 'text_delta', text: 'Hello' },
      { type: 'text_delta', text: ' world' },
      { type: 'finish', stopReason: 'stop' },
      { type: 'usage', usage: { inputTokens: 7, outputTokens: 2 } },
    ]);
    expect(upstream.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(upstream.requests[0].headers['accept']).toBe('text/event-stream');
  });

  it('streams a tool call with argument deltas, and counts usage the upstream left out', async () => {
    upstream.handle((_request, response) =>
      sendSse(response, [
        { data: chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }) },
        { data: chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }) },
        { data: chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] }) },
        { data: chunk({}, 'tool_calls') },
        { data: '[DONE]' },
      ]),
    );
    const request = canonicalRequest({ stream: true, tools: [weatherTool] });
    const events = await collect(adapter.stream(route, request, signal()));
    expect(events.filter((event) => event.type.startsWith('tool_call'))).toEqual([
      { type: 'tool_call_start', index: 0, id: 'call_1', name: 'get_weather' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '{"ci' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: 'ty":"Oslo"}' },
    ]);
    expect(events.at(-2)).toEqual({ type: 'finish', stopReason: 'tool_calls' });
    const outputTokens = encode('get_weather').length + encode('{"city":"Oslo"}').length;
    expect(events.at(-1)).toEqual({ type: 'usage', usage: { inputTokens: encode('Hello there').length, outputTokens } });
  });

  it('maps a 500 to a retryable UpstreamError with the upstream message', async () => {
    upstream.handle((_request, response) => sendJson(response, 500, { error: { message: 'The server had an error', type: 'server_error' } }));
    const error = await adapter.complete(route, canonicalRequest(), signal()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 500, retryable: true, message: 'The server had an error' });
  });

  it('maps a 400 to a non-retryable UpstreamError with the upstream message and body, streaming too', async () => {
    const body = { error: { message: "Invalid value for 'temperature'", type: 'invalid_request_error', param: 'temperature' } };
    upstream.handle((_request, response) => sendJson(response, 400, body));
    await expect(adapter.complete(route, canonicalRequest(), signal())).rejects.toMatchObject({
      status: 400,
      retryable: false,
      message: "Invalid value for 'temperature'",
      body,
    });
    await expect(collect(adapter.stream(route, canonicalRequest(), signal()))).rejects.toMatchObject({ status: 400, retryable: false });
  });

  it('treats 429 as retryable and a refused connection as a retryable status 0', async () => {
    upstream.handle((_request, response) => sendJson(response, 429, { error: { message: 'Rate limit reached' } }));
    await expect(adapter.complete(route, canonicalRequest(), signal())).rejects.toMatchObject({ status: 429, retryable: true });
    const closedPort = { ...route, baseUrl: 'http://127.0.0.1:1/v1' };
    await expect(adapter.complete(closedPort, canonicalRequest(), signal())).rejects.toMatchObject({ status: 0, retryable: true });
  });

  it('fails a stream that is cut off before finishing', async () => {
    upstream.handle((_request, response) => sendSse(response, [{ data: chunk({ content: 'Hel' }) }]));
    await expect(collect(adapter.stream(route, canonicalRequest(), signal()))).rejects.toMatchObject({ status: 502, retryable: true });
  });

  it('stops a stream when the signal aborts, rejecting with the abort reason', async () => {
    const events = Array.from({ length: 50 }, (_, i) => ({ data: chunk({ content: `t${i} ` }) }));
    upstream.handle((_request, response) => sendSse(response, events, 20));
    const controller = new AbortController();
    const seen: CanonicalStreamEvent[] = [];
    const reason = new Error('client went away');
    const run = (async () => {
      for await (const event of adapter.stream(route, canonicalRequest(), controller.signal)) {
        seen.push(event);
        if (seen.length === 3) controller.abort(reason);
      }
    })();
    await expect(run).rejects.toBe(reason);
    expect(seen).toHaveLength(3);
  });

  it('builds the URL from the default base', () => {
    expect(chatCompletionsUrl({ adapter: 'openai', upstreamModel: 'x' })).toBe('https://api.openai.com/v1/chat/completions');
  });
});
