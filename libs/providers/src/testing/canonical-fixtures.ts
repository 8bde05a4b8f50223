import type { CanonicalMessage, CanonicalRequest, ToolDefinition } from '@gateway/canonical';

/** A minimal canonical request for tests; override what the test is about. */
export function canonicalRequest(overrides: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return { model: 'public-model', messages: [userText('Hello there')], stream: false, ...overrides };
}

export function userText(text: string): CanonicalMessage {
  return { role: 'user', content: [{ type: 'text', text }] };
}

export const weatherTool: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
    required: ['city'],
  },
};
