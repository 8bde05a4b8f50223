/**
 * The Vercel AI SDK (`ai` 6) pointed at the gateway as its users configure it: `@ai-sdk/openai`
 * on chat completions (`openai.chat`) and on the Responses API (`openai.responses`, the SDK's
 * default, which stores responses and refers to its earlier output by id at the next step),
 * `@ai-sdk/anthropic` on messages, `@ai-sdk/openai-compatible` on chat completions; each against
 * the simulator and the fake OpenAI and Anthropic upstreams. What the SDK hands its user must be
 * right (text, executed tool calls, objects valid against the schema, usage), and the usage it
 * reports must be what the ledger recorded for the same requests.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embedMany, generateObject, generateText, type LanguageModel, stepCountIs, streamObject, streamText, tool } from 'ai';
import { z } from 'zod/v4';
import { createAccount, TestAccount } from '../support/api';
import { ADAPTER_MODELS, marker } from '../support/clients';
import { ledgerEntries, ledgerTotals, recordingFetch, RecordingFetch } from '../support/recording-fetch';
import { suiteInfo } from '../support/suite-info';

type ProviderName = 'openai chat' | 'openai responses' | 'anthropic' | 'openai-compatible';

/** The language model a user of each provider package would get for `model`. */
function languageModel(provider: ProviderName, model: string, apiKey: string, recorder: RecordingFetch): LanguageModel {
  const baseURL = `${suiteInfo().edgeA}/v1`;
  const options = { baseURL, apiKey, fetch: recorder.fetch };
  switch (provider) {
    case 'openai chat':
      return createOpenAI(options).chat(model);
    case 'openai responses':
      return createOpenAI(options).responses(model);
    case 'anthropic':
      return createAnthropic(options)(model);
    case 'openai-compatible':
      return createOpenAICompatible({ ...options, name: 'gateway', includeUsage: true, supportsStructuredOutputs: true }).chatModel(model);
  }
}

const Forecast = z.object({
  city: z.string(),
  temperature: z.number(),
  days: z.array(z.object({ day: z.string(), rain: z.boolean() })),
  unit: z.enum(['celsius', 'fahrenheit']),
});

const PROVIDERS: ProviderName[] = ['openai chat', 'openai responses', 'anthropic', 'openai-compatible'];
const CASES = PROVIDERS.flatMap((provider) => ADAPTER_MODELS.map(({ adapter, model }) => ({ provider, adapter, model })));

/** Every exchange the client made was answered 2xx (a 4xx the SDK swallowed would otherwise hide). */
function expectAllOk(recorder: RecordingFetch): void {
  expect(recorder.exchanges.map((exchange) => `${exchange.method} ${new URL(exchange.url).pathname} ${exchange.status}`)).toEqual(
    recorder.exchanges.map((exchange) => `${exchange.method} ${new URL(exchange.url).pathname} 200`),
  );
}

/** The SDK's usage is the ledger's, summed over the requests the SDK made. */
async function expectUsageInLedger(key: string, recorder: RecordingFetch, usage: { inputTokens?: number; outputTokens?: number }): Promise<void> {
  expect(usage.inputTokens).toBeGreaterThan(0);
  expect(usage.outputTokens).toBeGreaterThan(0);
  const ids = recorder.requestIds();
  expect(ids).toHaveLength(recorder.exchanges.length);
  const entries = await ledgerEntries(key, ids);
  expect(entries.map((entry) => entry.status)).toEqual(ids.map(() => 'success'));
  expect(ledgerTotals(entries)).toEqual({ input: usage.inputTokens, output: usage.outputTokens });
}

describe.each(CASES)('Vercel AI SDK: $provider provider, $adapter upstream ($model)', ({ provider, model }) => {
  let account: TestAccount;
  let recorder: RecordingFetch;
  let llm: LanguageModel;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  beforeEach(() => {
    recorder = recordingFetch();
    llm = languageModel(provider, model, account.masterKey, recorder);
  });

  it('generateText answers in text, with the usage the ledger recorded', async () => {
    const result = await generateText({ model: llm, prompt: `Say hello in one sentence. (${marker('gen')})`, maxRetries: 0 });
    expect(result.text.trim()).not.toBe('');
    expect(result.finishReason).toBe('stop');
    expectAllOk(recorder);
    expect(recorder.exchanges).toHaveLength(1);
    await expectUsageInLedger(account.masterKey, recorder, result.usage);
  });

  it('streamText runs a multi-step tool loop: the tool is executed and its result answered in text', async () => {
    const executed: { city: string }[] = [];
    const result = streamText({
      model: llm,
      maxRetries: 0,
      prompt: `Use the get_weather tool: what is the weather in Paris? (${marker('loop')})`,
      tools: {
        get_weather: tool({
          description: 'Current weather in a city',
          inputSchema: z.object({ city: z.string().describe('City name') }),
          execute: async ({ city }) => {
            executed.push({ city });
            return { city, temperature: 21, sky: 'clear' };
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    let streamed = '';
    for await (const delta of result.textStream) streamed += delta;
    const steps = await result.steps;

    expect(executed.length).toBeGreaterThanOrEqual(1);
    expect(typeof executed[0].city).toBe('string');
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(steps[0].finishReason).toBe('tool-calls');
    expect(steps[0].toolCalls.map((call) => call.toolName)).toContain('get_weather');
    expect(steps[0].toolResults.map((toolResult) => toolResult.toolName)).toContain('get_weather');
    const last = steps[steps.length - 1];
    expect(last.finishReason).toBe('stop');
    expect(last.text.trim()).not.toBe('');
    expect(streamed).toContain(last.text);
    // One HTTP request per step, each answered 200, each metered as the SDK counted it.
    expect(recorder.exchanges).toHaveLength(steps.length);
    expectAllOk(recorder);
    await expectUsageInLedger(account.masterKey, recorder, await result.totalUsage);
  });

  it('generateObject answers an object valid against the schema', async () => {
    const result = await generateObject({
      model: llm,
      maxRetries: 0,
      schema: Forecast,
      schemaName: 'forecast',
      prompt: `Give me the weather forecast for Paris. (${marker('obj')})`,
    });
    expect(Forecast.parse(result.object)).toEqual(result.object);
    expect(result.finishReason).toBe('stop');
    expectAllOk(recorder);
    await expectUsageInLedger(account.masterKey, recorder, result.usage);
  });

  it('streamObject streams partial objects that end in one valid against the schema', async () => {
    const result = streamObject({
      model: llm,
      maxRetries: 0,
      schema: Forecast,
      schemaName: 'forecast',
      prompt: `Stream the weather forecast for Paris. (${marker('sobj')})`,
    });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) partials.push(partial);
    const object = await result.object;
    expect(partials.length).toBeGreaterThan(0);
    expect(Forecast.parse(object)).toEqual(object);
    expectAllOk(recorder);
    await expectUsageInLedger(account.masterKey, recorder, await result.usage);
  });
});

/**
 * `@ai-sdk/openai-compatible` as configured by default (no `supportsStructuredOutputs`): objects
 * are asked for with `response_format: {type: "json_object"}`, and the schema travels in the
 * prompt. This SDK version sends none of its own, so the test writes it as the SDK's
 * `injectJsonInstruction` does (and earlier versions of `generateObject` did).
 */
describe('Vercel AI SDK: openai-compatible provider in JSON mode, simulator (sim-chat)', () => {
  let account: TestAccount;
  let recorder: RecordingFetch;
  let llm: LanguageModel;
  const instruction = `JSON schema:\n${JSON.stringify(z.toJSONSchema(Forecast))}\nYou MUST answer with a JSON object that matches the JSON schema above.`;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  beforeEach(() => {
    recorder = recordingFetch();
    llm = createOpenAICompatible({
      baseURL: `${suiteInfo().edgeA}/v1`,
      apiKey: account.masterKey,
      fetch: recorder.fetch,
      name: 'gateway',
      includeUsage: true,
    }).chatModel('sim-chat');
  });

  it('generateObject answers an object valid against the schema given in the prompt', async () => {
    const result = await generateObject({
      model: llm,
      maxRetries: 0,
      schema: Forecast,
      system: instruction,
      prompt: `Give me the weather forecast for Oslo. (${marker('jsonobj')})`,
    });
    expect(recorder.exchanges[0].body.response_format).toEqual({ type: 'json_object' });
    expect(Forecast.parse(result.object)).toEqual(result.object);
    expectAllOk(recorder);
    await expectUsageInLedger(account.masterKey, recorder, result.usage);
  });

  it('streamObject ends in an object valid against the schema given in the prompt', async () => {
    const result = streamObject({
      model: llm,
      maxRetries: 0,
      schema: Forecast,
      system: instruction,
      prompt: `Stream the weather forecast for Oslo. (${marker('jsonsobj')})`,
    });
    for await (const partial of result.partialObjectStream) expect(partial).toEqual(expect.any(Object));
    const object = await result.object;
    expect(Forecast.parse(object)).toEqual(object);
    expectAllOk(recorder);
  });
});

describe('Vercel AI SDK: embedMany', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  const embeddingCases = [
    { provider: 'openai', model: 'sim-embed' },
    { provider: 'openai', model: 'fake-openai-embed' },
    { provider: 'openai-compatible', model: 'sim-embed' },
  ] as const;

  it.each(embeddingCases)('$provider provider, $model: one vector per value, usage as in the ledger', async ({ provider, model }) => {
    const recorder = recordingFetch();
    const options = { baseURL: `${suiteInfo().edgeA}/v1`, apiKey: account.masterKey, fetch: recorder.fetch };
    const embeddingModel =
      provider === 'openai' ? createOpenAI(options).embedding(model) : createOpenAICompatible({ ...options, name: 'gateway' }).embeddingModel(model);
    const values = ['sunny day at the beach', 'rainy night in the city', `a third value ${marker('emb')}`];
    const result = await embedMany({ model: embeddingModel, values, maxRetries: 0 });

    expect(result.values).toEqual(values);
    expect(result.embeddings).toHaveLength(values.length);
    const dimensions = result.embeddings[0].length;
    expect(dimensions).toBeGreaterThan(0);
    for (const vector of result.embeddings) {
      expect(vector).toHaveLength(dimensions);
      expect(vector.every((x) => Number.isFinite(x))).toBe(true);
    }
    // Different texts, different vectors.
    expect(result.embeddings[0]).not.toEqual(result.embeddings[1]);
    expectAllOk(recorder);
    expect(result.usage.tokens).toBeGreaterThan(0);
    const entries = await ledgerEntries(account.masterKey, recorder.requestIds());
    expect(entries.map((entry) => entry.status)).toEqual(recorder.requestIds().map(() => 'success'));
    expect(ledgerTotals(entries).input).toBe(result.usage.tokens);
  });
});
