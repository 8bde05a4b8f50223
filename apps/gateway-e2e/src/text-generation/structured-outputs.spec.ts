/**
 * Structured outputs as the official SDKs ask for them: chat `response_format` (`parse` with
 * `zodResponseFormat`), responses `text.format` (`parse` with `zodTextFormat`), messages
 * `output_config.format` (`parse` with `zodOutputFormat`), against every kind of upstream. The
 * answer must be JSON valid against the schema; each upstream must receive its own mechanism; a
 * format that cannot be honoured is a 400 naming the field.
 */
import Ajv2020 from 'ajv/dist/2020';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { zodOutputFormat } from '@anthropic-ai/sdk/helpers/zod';
import { z } from 'zod/v4';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { api, createAccount, TestAccount } from '../support/api';
import { ADAPTER_MODELS, anthropicClient, fakeRequestsMentioning, marker, openaiClient } from '../support/clients';

const Forecast = z.object({
  city: z.string(),
  temperature: z.number(),
  days: z.array(z.object({ day: z.string(), rain: z.boolean() })),
  unit: z.enum(['celsius', 'fahrenheit']),
});
const forecastSchema = zodResponseFormat(Forecast, 'forecast').json_schema.schema as Record<string, unknown>;
const ajv = new Ajv2020({ strict: false });

/** The text is JSON, valid against the JSON schema the client sent (checked with ajv, independently of zod). */
function expectValidJson(text: string | null | undefined, schema: Record<string, unknown> = forecastSchema): unknown {
  const value: unknown = JSON.parse(text ?? '');
  // zod writes a draft-07 `$schema`; the keywords it uses mean the same in 2020-12.
  const body = { ...schema };
  delete body.$schema;
  const validate = ajv.compile(body);
  expect(validate(value) ? [] : validate.errors).toEqual([]);
  return value;
}

const prompt = (mk: string) => `Give me the weather forecast for Paris as JSON. (${mk})`;

describe.each([...ADAPTER_MODELS, { adapter: 'anthropic', model: 'fake-anthropic-structured' }] as const)(
  'structured outputs through the $adapter adapter ($model)',
  ({ model }) => {
    let account: TestAccount;

    beforeAll(() => {
      account = createAccount('pro', '100');
    });

    it('chat: completions.parse with zodResponseFormat', async () => {
      const completion = await openaiClient(account.masterKey).chat.completions.parse({
        model,
        messages: [{ role: 'user', content: prompt(marker('chatparse')) }],
        response_format: zodResponseFormat(Forecast, 'forecast'),
      });
      const choice = completion.choices[0];
      expect(choice.finish_reason).toBe('stop');
      expect(choice.message.tool_calls ?? []).toEqual([]);
      expectValidJson(choice.message.content);
      expect(Forecast.parse(choice.message.parsed)).toEqual(choice.message.parsed);
    });

    it('chat: a streamed json_schema answer assembles into valid JSON', async () => {
      const stream = await openaiClient(account.masterKey).chat.completions.create({
        model,
        stream: true,
        messages: [{ role: 'user', content: prompt(marker('chatstream')) }],
        response_format: zodResponseFormat(Forecast, 'forecast'),
      });
      let text = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(finish).toBe('stop');
      expectValidJson(text);
    });

    it('chat: json_object mode answers a JSON object', async () => {
      const completion = await openaiClient(account.masterKey).chat.completions.create({
        model,
        messages: [{ role: 'user', content: `Answer in JSON please. (${marker('chatobject')})` }],
        response_format: { type: 'json_object' },
      });
      const value: unknown = JSON.parse(completion.choices[0].message.content ?? '');
      expect(value).toEqual(expect.any(Object));
      expect(Array.isArray(value)).toBe(false);
    });

    it('responses: responses.parse with zodTextFormat, the format echoed back', async () => {
      const format = zodTextFormat(Forecast, 'forecast');
      const response = await openaiClient(account.masterKey).responses.parse({ model, input: prompt(marker('respparse')), text: { format } });
      expect(response.status).toBe('completed');
      expectValidJson(response.output_text);
      expect(Forecast.parse(response.output_parsed)).toEqual(response.output_parsed);
      expect(response.text?.format).toEqual({ type: 'json_schema', name: 'forecast', schema: format.schema, strict: true });
    });

    it('responses: streamed with text.format, echoed in created and completed', async () => {
      const format = zodTextFormat(Forecast, 'forecast');
      const stream = await openaiClient(account.masterKey).responses.create({ model, input: prompt(marker('respstream')), text: { format }, stream: true });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      const created = events.find((event) => event.type === 'response.created');
      const completed = events.find((event) => event.type === 'response.completed');
      expect(created?.type === 'response.created' && created.response.text?.format?.type).toBe('json_schema');
      if (completed?.type !== 'response.completed') throw new Error('no response.completed event');
      expect(completed.response.text?.format).toEqual({ type: 'json_schema', name: 'forecast', schema: format.schema, strict: true });
      const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
      expectValidJson(deltas.join(''));
    });

    it('messages: messages.parse with zodOutputFormat in output_config', async () => {
      const format = zodOutputFormat(Forecast);
      const message = await anthropicClient(account.masterKey).messages.parse({
        model,
        max_tokens: 1000,
        messages: [{ role: 'user', content: prompt(marker('msgparse')) }],
        output_config: { format },
      });
      expect(message.stop_reason).toBe('end_turn');
      expect(message.content.map((block) => block.type)).toEqual(['text']);
      expectValidJson(message.content[0].type === 'text' ? message.content[0].text : '', format.schema);
      expect(Forecast.parse(message.parsed_output)).toEqual(message.parsed_output);
    });

    it('messages: streamed with output_config, the JSON arrives as text deltas', async () => {
      const format = zodOutputFormat(Forecast);
      const stream = anthropicClient(account.masterKey).messages.stream({
        model,
        max_tokens: 1000,
        messages: [{ role: 'user', content: prompt(marker('msgstream')) }],
        output_config: { format },
      });
      let deltas = 0;
      stream.on('text', () => deltas++);
      const message = await stream.finalMessage();
      expect(deltas).toBeGreaterThan(0);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.content.map((block) => block.type)).toEqual(['text']);
      expectValidJson(message.content[0].type === 'text' ? message.content[0].text : '', format.schema);
    });
  },
);

describe('structured outputs: what each upstream receives', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('an OpenAI-compatible upstream gets response_format as Chat Completions defines it, from every format', async () => {
    const mk = marker('oaiupstream');
    const format = zodResponseFormat(Forecast, 'forecast');
    await openaiClient(account.masterKey).chat.completions.create({
      model: 'fake-openai',
      messages: [{ role: 'user', content: `chat ${mk}` }],
      response_format: format,
    });
    await openaiClient(account.masterKey).responses.create({ model: 'fake-openai', input: `responses ${mk}`, text: { format: { type: 'json_object' } } });
    await anthropicClient(account.masterKey).messages.create({
      model: 'fake-openai',
      max_tokens: 200,
      messages: [{ role: 'user', content: `messages ${mk}` }],
      output_config: { format: { type: 'json_schema', schema: forecastSchema } },
    });
    const sent = (await fakeRequestsMentioning('openai', mk)).map((request) => request.body.response_format);
    expect(sent).toEqual([
      { type: 'json_schema', json_schema: { name: 'forecast', schema: format.json_schema.schema, strict: true } },
      { type: 'json_object' },
      { type: 'json_schema', json_schema: { name: 'response', schema: forecastSchema } },
    ]);
  });

  it('an Anthropic upstream without native structured outputs gets one forced tool, unwrapped into text', async () => {
    const mk = marker('antforced');
    const completion = await openaiClient(account.masterKey).chat.completions.create({
      model: 'fake-anthropic',
      messages: [{ role: 'user', content: `forecast ${mk}` }],
      response_format: zodResponseFormat(Forecast, 'forecast'),
    });
    const [sent] = await fakeRequestsMentioning('anthropic', mk);
    expect(sent.body.tool_choice).toEqual({ type: 'tool', name: 'forecast' });
    expect(sent.body.tools).toEqual([expect.objectContaining({ name: 'forecast', input_schema: forecastSchema })]);
    expect(sent.body).not.toHaveProperty('output_config');
    // The fake answered with a tool_use block (stop_reason tool_use); the client sees text and stop.
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(expectValidJson(completion.choices[0].message.content)).toEqual({
      city: 'fake city',
      temperature: 1.5,
      days: [{ day: 'fake day', rain: true }],
      unit: 'celsius',
    });
  });

  it('JSON-object mode on an Anthropic upstream forces a tool with an open object schema', async () => {
    const mk = marker('antobject');
    const response = await openaiClient(account.masterKey).responses.create({
      model: 'fake-anthropic-structured',
      input: `json ${mk}`,
      text: { format: { type: 'json_object' } },
    });
    const [sent] = await fakeRequestsMentioning('anthropic', mk);
    expect(sent.body.tools).toEqual([expect.objectContaining({ name: 'structured_output', input_schema: { type: 'object', additionalProperties: true } })]);
    expect(sent.body.tool_choice).toEqual({ type: 'tool', name: 'structured_output' });
    expect(JSON.parse(response.output_text)).toEqual({});
    expect(response.text?.format).toEqual({ type: 'json_object' });
  });

  it('an Anthropic upstream with native structured outputs gets output_config.format', async () => {
    const mk = marker('antnative');
    await anthropicClient(account.masterKey).messages.create({
      model: 'fake-anthropic-structured',
      max_tokens: 200,
      messages: [{ role: 'user', content: `native ${mk}` }],
      output_config: { format: { type: 'json_schema', schema: forecastSchema } },
    });
    const [sent] = await fakeRequestsMentioning('anthropic', mk);
    expect(sent.body.output_config).toEqual({ format: { type: 'json_schema', schema: forecastSchema } });
    expect(sent.body).not.toHaveProperty('tool_choice');
  });
});

describe('structured outputs that cannot be honoured are a 400 naming the field', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  const post = (path: string, body: Record<string, unknown>) => api('POST', path, { key: account.masterKey, body });

  it.each([
    [
      'chat: a schema that is not an object',
      '/v1/chat/completions',
      {
        model: 'sim-chat',
        messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: 'object' } },
      },
      'response_format.json_schema.schema',
    ],
    [
      'chat: json_schema without a name',
      '/v1/chat/completions',
      { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { schema: forecastSchema } } },
      'response_format.json_schema.name',
    ],
    [
      'chat: reasoning with a forced-tool format',
      '/v1/chat/completions',
      // A reasoning model: another is not asked to reason, so nothing clashes with the format.
      { model: 'fake-anthropic-thinker', reasoning_effort: 'high', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } },
      'response_format',
    ],
    ['responses: an unknown format type', '/v1/responses', { model: 'sim-chat', input: 'hi', text: { format: { type: 'yaml' } } }, 'text.format.type'],
    [
      'responses: a non-object root on a forced-tool upstream',
      '/v1/responses',
      { model: 'fake-anthropic', input: 'hi', text: { format: { type: 'json_schema', name: 'list', schema: { type: 'array', items: { type: 'string' } } } } },
      'text.format',
    ],
  ])('%s', async (_name, path, body, param) => {
    const response = await post(path, body);
    expect(response.status).toBe(400);
    expect(response.body.error.param).toBe(param);
    expect(response.body.error.message).toContain(param);
  });

  it('messages: JSON-object mode does not exist in the Messages API', async () => {
    const response = await post('/v1/messages', {
      model: 'sim-chat',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
      output_config: { format: { type: 'json_object' } },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('output_config.format.type') },
    });
  });
});
