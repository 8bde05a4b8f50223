import { ModelCatalog } from '@gateway/catalog';
import type { TextFrame, TextGenerationRequest, UsageRecordedEvent } from '@gateway/contracts';
import { createProviderAdapters } from '@gateway/providers';
import { sendJson, sendSse, startFakeUpstream, type FakeUpstream } from '@gateway/providers/testing';
import { firstValueFrom, toArray } from 'rxjs';
import { UpstreamCaller } from '../providers/upstream-caller';
import { noHeartbeats } from '../testing/no-heartbeats';
import { testSealer } from '../testing/test-sealer';
import { noStore } from '../testing/no-store';
import { recordingCalls } from '../testing/recording-publisher';
import { InflightRequests } from './inflight-requests';
import { TextGenerationService } from './text-generation.service';

/**
 * Two reasoning models on one fake upstream: one spoken to in OpenAI's wire format, one in
 * Anthropic's; and the simulator, as a model the catalog marks as reasoning and as one it does not.
 */
const catalogYaml = (baseUrl: string) => `models:
  - id: up-openai
    pricing: { input: 0, output: 0 }
    endpoints: [chat.completions, messages]
    tags: [reasoning]
    routes:
      - { adapter: openai, base_url: "${baseUrl}/v1", upstream_model: gpt-upstream }
  - id: up-anthropic
    pricing: { input: 0, output: 0 }
    endpoints: [chat.completions, messages]
    tags: [reasoning]
    routes:
      - { adapter: anthropic, base_url: "${baseUrl}", upstream_model: claude-upstream }
  - id: sim-thinking
    pricing: { input: 0, output: 0 }
    endpoints: []
    tags: [text, reasoning]
    routes:
      - { adapter: simulator, upstream_model: sim }
  - id: sim-plain
    pricing: { input: 0, output: 0 }
    endpoints: []
    tags: [text]
    routes:
      - { adapter: simulator, upstream_model: sim }
`;

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'gpt-upstream',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const caller = { accountId: 'acct', keyId: 'key', keyType: 'master' as const, maskedKey: 'gw-...', ip: '127.0.0.1' };

/** The one frame of a whole (not streamed) reply. */
const jsonFrame = (status: number, body: unknown) => ({ kind: 'json', status, last: true, body });

/** The SSE text of a run's frames, and the last frame (which must say `last`). */
const sseText = (frames: TextFrame[]) => frames.flatMap((frame) => (frame.kind === 'sse' ? frame.frames : [])).join('');

describe('TextGenerationService.run against an upstream speaking OpenAI and Anthropic', () => {
  let upstream: FakeUpstream;
  let service: TextGenerationService;
  let adapters: ReturnType<typeof createProviderAdapters>;
  let events: UsageRecordedEvent[];
  let n = 0;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    adapters = createProviderAdapters();
    events = [];
    const catalog = ModelCatalog.fromYaml(catalogYaml(upstream.baseUrl), {}, () => undefined);
    const caller = new UpstreamCaller(adapters, { attemptsPerRoute: 1, baseDelayMs: 0 });
    service = new TextGenerationService(catalog, caller, recordingCalls(events), new InflightRequests(), noStore(), noHeartbeats(), testSealer());
  });

  afterAll(async () => {
    await Promise.all(Object.values(adapters).map((adapter) => adapter.close?.()));
    await upstream.close();
  });

  /** Runs one request to its end; its usage event is published as the call settles. */
  const run = async (format: TextGenerationRequest['format'], body: Record<string, unknown>) => {
    const requestId = `req_run_${++n}`;
    const frames = await firstValueFrom(service.generate({ ...caller, requestId, format, body }).pipe(toArray()));
    await new Promise((resolve) => setImmediate(resolve));
    return { frames, requestId, usage: events.filter((event) => event.requestId === requestId) };
  };

  it('a chat completion: one JSON frame in the client format, the upstream model asked, one usage event with its counts', async () => {
    upstream.handle((_request, response) =>
      sendJson(response, 200, {
        id: 'chatcmpl-1',
        created: 1700000000,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 11, completion_tokens: 3 },
      }),
    );
    const { frames, usage, requestId } = await run('chat', { model: 'up-openai', messages: [{ role: 'user', content: 'hi' }] });
    expect(upstream.requests.at(-1)).toMatchObject({ url: '/v1/chat/completions', body: { model: 'gpt-upstream', stream: false } });
    expect(frames).toEqual([
      jsonFrame(
        200,
        expect.objectContaining({
          object: 'chat.completion',
          model: 'up-openai',
          choices: [expect.objectContaining({ message: expect.objectContaining({ content: 'Hello there' }), finish_reason: 'stop' })],
          usage: expect.objectContaining({ prompt_tokens: 11, completion_tokens: 3 }),
        }),
      ),
    ]);
    expect(usage).toEqual([
      expect.objectContaining({
        requestId,
        model: 'up-openai',
        route: 'chat.completions',
        provider: 'openai',
        upstreamRoute: expect.stringMatching(/^up-openai\//),
        status: 'success',
        inputTokens: 11,
        outputTokens: 3,
      }),
    ]);
  });

  it('a stream: SSE frames in order with what was sent so far, the last one [DONE], billed by the upstream usage', async () => {
    upstream.handle((_request, response) =>
      sendSse(response, [
        { data: chunk({ role: 'assistant', content: '' }) },
        { data: chunk({ content: 'Hel' }) },
        { data: chunk({ content: 'lo' }) },
        { data: chunk({}, 'stop') },
        { data: { ...chunk({}), choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } } },
        { data: '[DONE]' },
      ]),
    );
    const { frames, usage } = await run('chat', { model: 'up-openai', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(upstream.requests.at(-1)?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const sse = frames.filter((frame) => frame.kind === 'sse');
    expect(sse).toEqual(frames);
    expect(sse.filter((frame) => frame.last)).toEqual([frames.at(-1)]);
    const text = sseText(frames);
    expect(text.indexOf('"content":"Hel"')).toBeGreaterThan(-1);
    expect(text.indexOf('"content":"lo"')).toBeGreaterThan(text.indexOf('"content":"Hel"'));
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    // Every frame tells the edge what the client has been sent, for billing should the router die.
    const counts = sse.map((frame) => frame.outputTokens ?? 0);
    expect([...counts].sort((a, b) => a - b)).toEqual(counts);
    expect(usage).toEqual([expect.objectContaining({ status: 'success', provider: 'openai', inputTokens: 5, outputTokens: 2 })]);
  });

  it('a Messages call through the Anthropic wire format, rendered back as a Messages response', async () => {
    upstream.handle((_request, response) =>
      sendJson(response, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-upstream',
        content: [{ type: 'text', text: 'Bonjour' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 8, output_tokens: 1 },
      }),
    );
    const { frames, usage } = await run('messages', { model: 'up-anthropic', max_tokens: 32, messages: [{ role: 'user', content: 'salut' }] });
    expect(upstream.requests.at(-1)).toMatchObject({ url: '/v1/messages', body: { model: 'claude-upstream', max_tokens: 32 } });
    expect(frames).toEqual([
      jsonFrame(
        200,
        expect.objectContaining({ type: 'message', model: 'up-anthropic', content: [{ type: 'text', text: 'Bonjour' }], stop_reason: 'end_turn' }),
      ),
    ]);
    expect(usage).toEqual([expect.objectContaining({ provider: 'anthropic', status: 'success', inputTokens: 8, outputTokens: 1 })]);
  });

  it("an upstream 400 is the client's: its status and message in the client's error body, an error usage event with our prompt count", async () => {
    upstream.handle((_request, response) => sendJson(response, 400, { error: { message: 'temperature is out of range', type: 'invalid_request_error' } }));
    const { frames, usage } = await run('chat', { model: 'up-openai', messages: [{ role: 'user', content: 'hi' }] });
    expect(frames).toEqual([jsonFrame(400, { error: expect.objectContaining({ message: 'temperature is out of range', type: 'invalid_request_error' }) })]);
    expect(usage).toEqual([expect.objectContaining({ status: 'error', outputTokens: 0, inputTokens: expect.any(Number) })]);
    expect(usage[0].inputTokens).toBeGreaterThan(0);
  });

  it('an upstream 500 with no route left is a 502 naming the upstream failure and the request', async () => {
    upstream.handle((_request, response) => sendJson(response, 500, { error: { message: 'boom' } }));
    const { frames, usage, requestId } = await run('chat', { model: 'up-openai', messages: [{ role: 'user', content: 'hi' }] });
    expect(frames).toEqual([jsonFrame(502, { error: expect.objectContaining({ message: 'The upstream provider failed: boom' }), request_id: requestId })]);
    expect(usage).toEqual([expect.objectContaining({ status: 'error' })]);
  });

  it('a stream cut after its first event ends with the format’s in-stream error, billed for what was generated', async () => {
    upstream.handle(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'partial' }))}\n\n`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      response.destroy();
    });
    const { frames, usage } = await run('chat', { model: 'up-openai', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const text = sseText(frames);
    expect(text).toContain('"content":"partial"');
    expect(text).toContain('The upstream provider failed mid-stream');
    expect(frames.at(-1)).toMatchObject({ kind: 'sse', last: true });
    expect(usage).toEqual([expect.objectContaining({ status: 'error', outputTokens: 1 })]);
  });

  describe("thinking display 'updates' (only the progress notes written between tool calls)", () => {
    const body = (model: string) => ({
      model,
      max_tokens: 4096,
      stream: true,
      thinking: { type: 'adaptive', display: 'updates' },
      messages: [{ role: 'user', content: 'Fix the tests.' }],
    });
    const thinkingBlocks = (text: string) =>
      text.split('\n').filter((line) => line.startsWith('data: ') && line.includes('"content_block_start"') && line.includes('"thinking"')).length;

    it('hides the reasoning of an upstream that writes no such notes, as omitted does', async () => {
      upstream.handle((_request, response) =>
        sendSse(response, [
          { data: chunk({ role: 'assistant', reasoning_content: 'All of my reasoning.' }) },
          { data: chunk({ content: 'Fixed.' }, 'stop') },
          { data: '[DONE]' },
        ]),
      );
      const text = sseText((await run('messages', body('up-openai'))).frames);
      expect(text).toContain('Fixed.');
      expect(text).not.toContain('All of my reasoning.');
      expect(thinkingBlocks(text)).toBe(0);
    });

    it('passes the mode and the beta flags to an Anthropic upstream, and its blocks through as it sent them', async () => {
      const event = (data: { type: string } & Record<string, unknown>) => ({ event: data.type, data });
      upstream.handle((_request, response) =>
        sendSse(response, [
          event({ type: 'message_start', message: { id: 'msg_u', usage: { input_tokens: 9, output_tokens: 1 } } }),
          event({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
          event({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-hidden' } }),
          event({ type: 'content_block_stop', index: 0 }),
          event({ type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: '', signature: '' } }),
          event({ type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: 'Running the tests now.' } }),
          event({ type: 'content_block_delta', index: 1, delta: { type: 'signature_delta', signature: 'sig-update' } }),
          event({ type: 'content_block_stop', index: 1 }),
          event({ type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } }),
          event({ type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Fixed.' } }),
          event({ type: 'content_block_stop', index: 2 }),
          event({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 30 } }),
          event({ type: 'message_stop' }),
        ]),
      );
      const requestId = `req_run_${++n}`;
      const request = { ...caller, requestId, format: 'messages' as const, body: body('up-anthropic'), betas: ['thinking-display-updates-2026-08-18'] };
      const text = sseText(await firstValueFrom(service.generate(request).pipe(toArray())));
      const sent = upstream.requests.at(-1)!;
      expect(sent.body).toMatchObject({ thinking: { display: 'updates' } });
      expect(sent.headers['anthropic-beta']).toBe('thinking-display-updates-2026-08-18');
      expect(thinkingBlocks(text)).toBe(2);
      expect(text).toContain('"signature":"sig-hidden"');
      expect(text).toContain('"thinking":"Running the tests now."');
      expect(text).toContain('"signature":"sig-update"');
    });
  });

  describe('reasoning asked of a model the catalog does not mark as reasoning', () => {
    const reply = async (format: TextGenerationRequest['format'], body: Record<string, unknown>) => {
      const [frame] = (await run(format, body)).frames;
      expect(frame).toMatchObject({ kind: 'json', status: 200 });
      return (frame as { body: any }).body;
    };

    it('is served without reasoning (no reasoning item, no reasoning tokens) in each format; a reasoning model reasons', async () => {
      for (const reasoning of [{}, { effort: 'high' }, { effort: 'low', summary: 'auto' }]) {
        const plain = await reply('responses', { model: 'sim-plain', input: 'Why is the sky blue?', reasoning });
        expect(plain.output.map((item: any) => item.type)).toEqual(['message']);
        expect(plain.usage.output_tokens_details.reasoning_tokens).toBe(0);
        expect(plain.reasoning).toEqual({ effort: null, summary: reasoning.summary ?? null });
        const thinking = await reply('responses', { model: 'sim-thinking', input: 'Why is the sky blue?', reasoning });
        expect(thinking.output.map((item: any) => item.type)).toEqual(['reasoning', 'message']);
        expect(thinking.usage.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
      }
      const chat = await reply('chat', { model: 'sim-plain', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high' });
      expect(chat.choices[0].message).not.toHaveProperty('reasoning');
      expect(chat.usage.completion_tokens_details.reasoning_tokens).toBe(0);
      const messages = await reply('messages', {
        model: 'sim-plain',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(messages.content.map((block: any) => block.type)).toEqual(['text']);
    });
  });

  it('an unknown model is a 404 before any upstream call', async () => {
    const before = upstream.requests.length;
    const { frames, usage } = await run('chat', { model: 'nope', messages: [{ role: 'user', content: 'hi' }] });
    expect(frames).toEqual([
      jsonFrame(404, { error: expect.objectContaining({ message: "The model 'nope' does not exist or is not available to you", param: 'model' }) }),
    ]);
    expect(upstream.requests.length).toBe(before);
    expect(usage).toEqual([expect.objectContaining({ status: 'error', inputTokens: 0, outputTokens: 0 })]);
  });
});
