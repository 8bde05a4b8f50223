/**
 * The official SDKs pointed at the gateway, as a user would configure them, and helpers to read
 * what the fake upstream providers received.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { randomUUID } from 'node:crypto';
import type { RecordedRequest } from './fake-upstreams';
import { suiteInfo } from './suite-info';

/**
 * `fetch`, one turn of the event loop later: after the test process was blocked (the admin CLI of
 * `createAccount` runs synchronously), the closes of pooled connections the edge ended meanwhile
 * (idle past its keep-alive) are read before a request could be written to one of them (as `api()`).
 */
export const settledFetch: typeof fetch = async (input, init) => {
  await new Promise((resolve) => setImmediate(resolve));
  return fetch(input, init);
};

/** `baseURL: <edge>/v1`. No retries: every request in a test must be exactly one request. */
export function openaiClient(apiKey: string, base = suiteInfo().edgeA): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${base}/v1`, maxRetries: 0, timeout: 30_000, fetch: settledFetch });
}

/** `baseURL: <edge>` (the SDK appends `/v1/messages`); the key travels as `x-api-key`. */
export function anthropicClient(apiKey: string, base = suiteInfo().edgeA): Anthropic {
  return new Anthropic({ apiKey, baseURL: base, maxRetries: 0, timeout: 30_000, fetch: settledFetch });
}

/**
 * A client-chosen request id (letters, digits, `._:-`): the gateway echoes it as
 * `x-client-request-id` and carries it in the usage event as `clientRequestId`; its own request id
 * (`x-request-id`, the event's `requestId`) is always generated.
 */
export function newRequestId(label = 'e2e'): string {
  return `${label}-${randomUUID()}`;
}

/** Request options that set our own `x-client-request-id`. */
export function withRequestId(requestId: string, headers: Record<string, string> = {}): { headers: Record<string, string> } {
  return { headers: { 'x-client-request-id': requestId, ...headers } };
}

/** A marker to put in a prompt, so a test can find its own call among everything a fake received. */
export function marker(label = 'm'): string {
  return `${label}${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

/** Everything a fake upstream received so far (over HTTP, so it works from any jest worker). */
export async function fakeRequests(kind: 'openai' | 'anthropic'): Promise<RecordedRequest[]> {
  const info = suiteInfo();
  const response = await fetch(`${kind === 'openai' ? info.fakeOpenAI : info.fakeAnthropic}/__requests`);
  if (!response.ok) throw new Error(`fake ${kind} answered ${response.status}`);
  return (await response.json()) as RecordedRequest[];
}

/** The requests a fake received whose body mentions `text` (e.g. a marker from the prompt). */
export async function fakeRequestsMentioning(kind: 'openai' | 'anthropic', text: string): Promise<RecordedRequest[]> {
  return (await fakeRequests(kind)).filter((request) => JSON.stringify(request.body ?? '').includes(text));
}

/** The weather tool in each format's spelling. */
export const weatherParameters: { type: 'object'; properties: Record<string, unknown>; required: string[] } = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'City name' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city'],
};

export const chatWeatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Current weather in a city', parameters: weatherParameters },
};

export const responsesWeatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: weatherParameters,
  strict: false,
};

export const messagesWeatherTool = {
  name: 'get_weather',
  description: 'Current weather in a city',
  input_schema: weatherParameters,
};

/** The three kinds of upstream each format is tried against. */
export const ADAPTER_MODELS = [
  { adapter: 'simulator', model: 'sim-chat' },
  { adapter: 'openai', model: 'fake-openai' },
  { adapter: 'anthropic', model: 'fake-anthropic' },
] as const;
