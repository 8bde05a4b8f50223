/**
 * LangChain JS pointed at the gateway as its users configure it: `ChatOpenAI` (`configuration.baseURL`)
 * on chat completions, `ChatAnthropic` (`anthropicApiUrl`) on messages, against the simulator and
 * the fake OpenAI and Anthropic upstreams. What LangChain hands its user must be right (text, tool
 * calls, structured objects in each `withStructuredOutput` method) and its usage figures, which
 * cost trackers read, must be the ledger's.
 */
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessage, type AIMessageChunk, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod/v4';
import { createAccount, TestAccount } from '../support/api';
import { ADAPTER_MODELS, marker } from '../support/clients';
import { ledgerEntries, ledgerEntry, ledgerTotals, recordingFetch, RecordingFetch } from '../support/recording-fetch';
import { suiteInfo } from '../support/suite-info';

const Forecast = z.object({
  city: z.string(),
  temperature: z.number(),
  days: z.array(z.object({ day: z.string(), rain: z.boolean() })),
  unit: z.enum(['celsius', 'fahrenheit']),
});

const getWeather = tool(async ({ city }: { city: string }) => JSON.stringify({ city, temperature: 21, sky: 'clear' }), {
  name: 'get_weather',
  description: 'Current weather in a city',
  schema: z.object({ city: z.string().describe('City name') }),
});

function chatOpenAI(model: string, apiKey: string, recorder: RecordingFetch): ChatOpenAI {
  return new ChatOpenAI({ model, apiKey, maxRetries: 0, configuration: { baseURL: `${suiteInfo().edgeA}/v1`, fetch: recorder.fetch } });
}

function expectAllOk(recorder: RecordingFetch): void {
  expect(recorder.exchanges.map((exchange) => exchange.status)).toEqual(recorder.exchanges.map(() => 200));
}

/** LangChain's `usage_metadata` is the ledger's entry for the one request it made. */
async function expectUsageInLedger(key: string, recorder: RecordingFetch, message: AIMessage | AIMessageChunk): Promise<void> {
  const usage = message.usage_metadata;
  expect(usage?.input_tokens).toBeGreaterThan(0);
  expect(usage?.output_tokens).toBeGreaterThan(0);
  expect(recorder.requestIds()).toHaveLength(1);
  const entry = await ledgerEntry(key, recorder.requestIds()[0]);
  expect(entry.status).toBe('success');
  expect({ input: entry.input_tokens, output: entry.output_tokens }).toEqual({ input: usage?.input_tokens, output: usage?.output_tokens });
}

function textOf(message: BaseMessage): string {
  return typeof message.content === 'string' ? message.content : message.content.map((part) => ('text' in part ? String(part.text) : '')).join('');
}

describe.each(ADAPTER_MODELS)('LangChain ChatOpenAI, $adapter upstream ($model)', ({ model }) => {
  let account: TestAccount;
  let recorder: RecordingFetch;
  let llm: ChatOpenAI;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  beforeEach(() => {
    recorder = recordingFetch();
    llm = chatOpenAI(model, account.masterKey, recorder);
  });

  it('invoke answers in text, with usage_metadata as in the ledger', async () => {
    const message = await llm.invoke(`Say hello in one sentence. (${marker('invoke')})`);
    expect(textOf(message).trim()).not.toBe('');
    expect(message.response_metadata.finish_reason).toBe('stop');
    expectAllOk(recorder);
    await expectUsageInLedger(account.masterKey, recorder, message);
  });

  it('stream delivers the text in chunks, and the usage (stream_options.include_usage) as in the ledger', async () => {
    let aggregate: AIMessageChunk | undefined;
    let chunks = 0;
    for await (const chunk of await llm.stream(`Tell me a short story. (${marker('stream')})`)) {
      chunks++;
      aggregate = aggregate === undefined ? chunk : aggregate.concat(chunk);
    }
    expect(chunks).toBeGreaterThan(2);
    expect(aggregate && textOf(aggregate).trim()).not.toBe('');
    expectAllOk(recorder);
    await expectUsageInLedger(account.masterKey, recorder, aggregate as AIMessageChunk);
  });

  it('bindTools: the model calls the tool, and answers its result in text', async () => {
    const withTools = llm.bindTools([getWeather]);
    const question = new HumanMessage(`Use the get_weather tool: what is the weather in Paris? (${marker('tools')})`);
    const first = await withTools.invoke([question]);
    expect(first.tool_calls?.map((call) => call.name)).toEqual(['get_weather']);
    const call = first.tool_calls?.[0];
    expect(typeof call?.args.city).toBe('string');
    const result = await getWeather.invoke(call as NonNullable<typeof call>);
    const second = await withTools.invoke([question, first, result]);
    expect(second.tool_calls ?? []).toEqual([]);
    expect(textOf(second).trim()).not.toBe('');
    expectAllOk(recorder);
    const entries = await ledgerEntries(account.masterKey, recorder.requestIds());
    expect(ledgerTotals(entries)).toEqual({
      input: (first.usage_metadata?.input_tokens ?? 0) + (second.usage_metadata?.input_tokens ?? 0),
      output: (first.usage_metadata?.output_tokens ?? 0) + (second.usage_metadata?.output_tokens ?? 0),
    });
  });

  it.each(['functionCalling', 'jsonSchema'] as const)('withStructuredOutput (%s) answers an object valid against the schema', async (method) => {
    const structured = llm.withStructuredOutput(Forecast, { method, name: 'forecast', includeRaw: true });
    const { parsed, raw } = await structured.invoke(`Give me the weather forecast for Paris. (${marker(method)})`);
    expect(Forecast.parse(parsed)).toEqual(parsed);
    const sent = recorder.exchanges[0].body;
    if (method === 'functionCalling') expect(sent.tools.map((t: any) => t.function.name)).toEqual(['forecast']);
    else expect(sent.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'forecast' } });
    expectAllOk(recorder);
    await expectUsageInLedger(account.masterKey, recorder, raw as AIMessage);
  });

  it('withStructuredOutput (jsonMode) answers a JSON object', async () => {
    // JSON mode promises an object, not a shape: the schema accepts any object.
    const structured = llm.withStructuredOutput(z.object({}).passthrough(), { method: 'jsonMode', includeRaw: true });
    const { parsed, raw } = await structured.invoke(`Answer in JSON: the weather forecast for Paris. (${marker('jsonmode')})`);
    expect(recorder.exchanges[0].body.response_format).toEqual({ type: 'json_object' });
    // The object the answer's text holds (the fake Anthropic upstream's sample of an open schema is `{}`).
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(parsed).toEqual(JSON.parse(textOf(raw as AIMessage)));
    expectAllOk(recorder);
    await expectUsageInLedger(account.masterKey, recorder, raw as AIMessage);
  });
});

describe.each(ADAPTER_MODELS)('LangChain ChatAnthropic, $adapter upstream ($model)', ({ adapter, model }) => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('stream: usage_metadata counts the input tokens (from message_start) and the output, as in the ledger', async () => {
    const recorder = recordingFetch();
    const llm = new ChatAnthropic({
      model,
      apiKey: account.masterKey,
      maxRetries: 0,
      anthropicApiUrl: suiteInfo().edgeA,
      clientOptions: { fetch: recorder.fetch },
    });
    let aggregate: AIMessageChunk | undefined;
    for await (const chunk of await llm.stream(`Tell me a short story. (${marker('astream')})`)) {
      aggregate = aggregate === undefined ? chunk : aggregate.concat(chunk);
    }
    expect(aggregate && textOf(aggregate).trim()).not.toBe('');
    expectAllOk(recorder);
    const usage = (aggregate as AIMessageChunk).usage_metadata;
    expect(usage?.input_tokens).toBeGreaterThan(0);
    expect(recorder.requestIds()).toHaveLength(1);
    const entry = await ledgerEntry(account.masterKey, recorder.requestIds()[0]);
    expect(entry.status).toBe('success');
    // An Anthropic upstream reports its input in its own message_start, passed on; the simulator's is
    // counted. An OpenAI upstream reports it only at the end (message_delta carries it), so what
    // message_start can say, and LangChain keeps, is the gateway's own count, not the billed one.
    if (adapter !== 'openai') expect(usage?.input_tokens).toBe(entry.input_tokens);
    // LangChain adds message_start's output_tokens (Anthropic sends 1 there, and so does the gateway
    // when it relays an Anthropic upstream) to message_delta's cumulative count.
    expect([entry.output_tokens, entry.output_tokens + 1]).toContain(usage?.output_tokens);
  });
});
