/**
 * Upstream failures as a user sees them: a 5xx upstream falls back to the next route (the caller
 * gets a normal 200), a 4xx upstream is passed through with the provider's message.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { api, createAccount, TestAccount } from '../support/api';
import { anthropicClient, fakeRequestsMentioning, marker, newRequestId, openaiClient, withRequestId } from '../support/clients';
import { REJECT_400_MESSAGE } from '../support/fake-upstreams';
import { UsageWatcher } from '../support/usage-events';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

describe('upstream failures', () => {
  let account: TestAccount;
  let usage: UsageWatcher;

  beforeAll(async () => {
    account = createAccount('pro', '100');
    usage = await UsageWatcher.open();
  });

  afterAll(async () => {
    await usage?.close();
  });

  describe("an upstream refusing the gateway's provider key (401)", () => {
    it("is a 502 about the provider key, never the caller's key or the provider's words about ours, and is not retried", async () => {
      const mk = marker('badkey');
      const response = await api('POST', '/v1/chat/completions', {
        key: account.masterKey,
        body: { model: 'bad-key-chat', messages: [{ role: 'user', content: `Hi ${mk}` }] },
      });
      expect(response.status).toBe(502);
      expect(response.body.error.message).toMatch(/provider key/);
      expect(JSON.stringify(response.body)).not.toContain('sk-');
      expect(await fakeRequestsMentioning('openai', mk)).toHaveLength(1);
      // The caller's key is fine: it keeps working.
      expect((await api('GET', '/v1/models', { key: account.masterKey })).status).toBe(200);
    });

    it("falls back to the model's next route", async () => {
      const mk = marker('badkeyfallback');
      const completion = await openaiClient(account.masterKey).chat.completions.create({
        model: 'bad-key-fallback',
        messages: [{ role: 'user', content: `Still there ${mk}` }],
      });
      expect(completion.choices[0].message.content).toContain(`You said: "Still there ${mk}"`);
    });
  });

  describe('an upstream answering 500', () => {
    it('falls back to the next route: fallback-chat answers 200 from the simulator', async () => {
      const mk = marker('fallback');
      const completion = await openaiClient(account.masterKey).chat.completions.create({
        model: 'fallback-chat',
        messages: [{ role: 'user', content: `Are you there ${mk}` }],
      });
      expect(completion.object).toBe('chat.completion');
      expect(completion.model).toBe('fallback-chat');
      expect(completion.choices[0].finish_reason).toBe('stop');
      // The simulator's reply quotes the prompt.
      expect(completion.choices[0].message.content).toContain(`You said: "Are you there ${mk}"`);
      const failed = await fakeRequestsMentioning('openai', mk);
      expect(failed.length).toBeGreaterThanOrEqual(1);
      expect(failed.every((request) => request.body.model === 'always-500')).toBe(true);
    });

    it('falls back before the first streamed byte: the stream is a normal 200 stream', async () => {
      const mk = marker('fallbackstream');
      const stream = await openaiClient(account.masterKey).chat.completions.create({
        model: 'fallback-chat',
        messages: [{ role: 'user', content: `Stream please ${mk}` }],
        stream: true,
      });
      const chunks: ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toContain(mk);
      expect(chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'stop')).toBe(true);
      expect((await fakeRequestsMentioning('openai', mk)).length).toBeGreaterThanOrEqual(1);
    });

    it('falls back for the messages format too', async () => {
      const mk = marker('fallbackmsg');
      const message = await anthropicClient(account.masterKey).messages.create({
        model: 'fallback-chat',
        max_tokens: 300,
        messages: [{ role: 'user', content: `Hello ${mk}` }],
      });
      expect(message.stop_reason).toBe('end_turn');
      expect((message.content[0] as { text: string }).text).toContain(mk);
      expect((await fakeRequestsMentioning('openai', mk)).length).toBeGreaterThanOrEqual(1);
    });
  });

  describe('an upstream answering 400', () => {
    it('is passed through: the OpenAI SDK throws BadRequestError with status 400 and the upstream message', async () => {
      const mk = marker('reject');
      const error = await rejection(
        openaiClient(account.masterKey).chat.completions.create({ model: 'reject-400-chat', messages: [{ role: 'user', content: `Hi ${mk}` }] }),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const badRequest = error as InstanceType<typeof OpenAI.BadRequestError>;
      expect(badRequest.status).toBe(400);
      expect(badRequest.message).toContain(REJECT_400_MESSAGE);
      expect(badRequest.error).toMatchObject({ message: expect.stringContaining(REJECT_400_MESSAGE), type: 'invalid_request_error' });
      // A 4xx is the caller's problem: not retried, no fallback.
      expect(await fakeRequestsMentioning('openai', mk)).toHaveLength(1);
    });

    it('is passed through for a streamed request before any output, as a 400 the SDK raises', async () => {
      const mk = marker('rejectstream');
      const error = await rejection(
        (async () => {
          const stream = await openaiClient(account.masterKey).chat.completions.create({
            model: 'reject-400-chat',
            messages: [{ role: 'user', content: `Hi ${mk}` }],
            stream: true,
          });
          for await (const chunk of stream) void chunk;
        })(),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(REJECT_400_MESSAGE);
    });

    it('is passed through on responses and messages in their own error shapes', async () => {
      const responsesError = await rejection(openaiClient(account.masterKey).responses.create({ model: 'reject-400-chat', input: 'Hi' }));
      expect(responsesError).toBeInstanceOf(OpenAI.BadRequestError);
      expect((responsesError as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(REJECT_400_MESSAGE);

      const messagesError = await rejection(
        anthropicClient(account.masterKey).messages.create({ model: 'reject-400-chat', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }),
      );
      expect(messagesError).toBeInstanceOf(Anthropic.BadRequestError);
      const badRequest = messagesError as InstanceType<typeof Anthropic.BadRequestError>;
      expect(badRequest.status).toBe(400);
      expect(badRequest.error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining(REJECT_400_MESSAGE) } });
    });
  });

  describe('an upstream failing with no route left', () => {
    it('answers 502 in the OpenAI error shape with the request id, after retrying the upstream', async () => {
      const mk = marker('broken');
      const requestId = newRequestId('broken');
      const response = await api('POST', '/v1/chat/completions', {
        key: account.masterKey,
        headers: { 'x-request-id': requestId },
        body: { model: 'broken-chat', messages: [{ role: 'user', content: `Hi ${mk}` }] },
      });
      expect(response.status).toBe(502);
      expect(response.headers.get('x-client-request-id')).toBe(requestId);
      expect(response.body).toEqual({
        error: { message: expect.stringMatching(/upstream/i), type: expect.any(String), code: expect.anything(), param: null },
        request_id: response.headers.get('x-request-id'),
      });
      // Retried (UPSTREAM_ATTEMPTS, 2 by default) before giving up.
      expect((await fakeRequestsMentioning('openai', mk)).length).toBeGreaterThanOrEqual(2);
      expect(await usage.single(requestId)).toMatchObject({ status: 'error', model: 'broken-chat' });

      const error = await rejection(
        openaiClient(account.masterKey).chat.completions.create({ model: 'broken-chat', messages: [{ role: 'user', content: 'Hi' }] }),
      );
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect((error as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(502);
    });
  });

  describe('an upstream dropping the connection mid-stream', () => {
    it('chat: the client gets the first deltas, then an error the SDK raises; usage says error', async () => {
      const requestId = newRequestId('cutoff-chat');
      const stream = await openaiClient(account.masterKey).chat.completions.create(
        { model: 'cut-off-openai', messages: [{ role: 'user', content: 'Tell me everything' }], stream: true },
        withRequestId(requestId),
      );
      const deltas: string[] = [];
      const error = await rejection(
        (async () => {
          for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) deltas.push(chunk.choices[0].delta.content);
        })(),
      );
      expect(deltas.length).toBeGreaterThan(0);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as Error).message).toMatch(/mid-stream/);
      expect(await usage.single(requestId)).toMatchObject({ status: 'error', model: 'cut-off-openai', route: 'chat.completions' });
    });

    it('messages: the client gets the first deltas, then an error event the SDK raises', async () => {
      const requestId = newRequestId('cutoff-msg');
      const stream = await anthropicClient(account.masterKey).messages.create(
        { model: 'cut-off-anthropic', max_tokens: 500, messages: [{ role: 'user', content: 'Tell me everything' }], stream: true },
        withRequestId(requestId),
      );
      const deltas: string[] = [];
      const error = await rejection(
        (async () => {
          for await (const event of stream) {
            if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') deltas.push(event.delta.text);
          }
        })(),
      );
      expect(deltas.length).toBeGreaterThan(0);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { message: expect.stringMatching(/mid-stream/) },
      });
      expect(await usage.single(requestId)).toMatchObject({ status: 'error', model: 'cut-off-anthropic', route: 'messages' });
    });

    it('responses: the stream ends with an error event instead of response.completed', async () => {
      const stream = await openaiClient(account.masterKey).responses.create({ model: 'cut-off-openai', input: 'Tell me everything', stream: true });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(events.some((event) => event.type === 'response.output_text.delta')).toBe(true);
      const last = events.at(-1)!;
      expect(last.type).toBe('error');
      expect((last as any).message).toMatch(/mid-stream/);
      expect(events.some((event) => event.type === 'response.completed')).toBe(false);
    });
  });
});
