import * as fc from 'fast-check';
import { clientFormat, reservedOutputCap } from '@gateway/client-formats';
import { TextFormats, type TextFormat } from '@gateway/contracts';
import { toAnthropicRequest, toOpenAIRequest } from '@gateway/providers';
import { withinReservedOutput } from './reserved-output';

const MESSAGES: Record<TextFormat, Record<string, unknown>> = {
  chat: { messages: [{ role: 'user', content: 'hi' }] },
  responses: { input: 'hi' },
  messages: { messages: [{ role: 'user', content: 'hi' }] },
};

/** Values a cap field may hold: absent, null, valid, and every kind the parser refuses. */
const capValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer({ min: 1, max: 200_000 }),
  fc.integer({ min: -10, max: 0 }),
  fc.double({ noNaN: false }),
  fc.constantFrom('100', true, [], {}, 1e20),
);

const body = fc.record({
  format: fc.constantFrom(...TextFormats),
  max_tokens: capValue,
  max_completion_tokens: capValue,
  max_output_tokens: capValue,
  modelMax: fc.option(fc.integer({ min: 1, max: 128_000 }), { nil: undefined }),
  reasoningBudget: fc.option(fc.integer({ min: 1024, max: 64_000 }), { nil: undefined }),
});

describe('the reserved output cap', () => {
  it('bounds what any upstream is asked for, whatever cap fields a body combines (property)', () => {
    fc.assert(
      fc.property(body, ({ format, modelMax, reasoningBudget, ...caps }) => {
        const client: Record<string, unknown> = { model: 'm', ...MESSAGES[format] };
        for (const [field, value] of Object.entries(caps)) if (value !== undefined) client[field] = value;
        const reserved = reservedOutputCap(format, client, modelMax);
        let parsed;
        try {
          parsed = clientFormat(format).parse(client, { reasoningExcludeSuffix: false }).request;
        } catch {
          return; // refused with a 400: the upstream is asked nothing
        }
        const withReasoning =
          reasoningBudget === undefined ? parsed : { ...parsed, reasoning: { enabled: true, budgetTokens: reasoningBudget, exclude: false } };
        const upstream = withinReservedOutput(withReasoning, reserved);
        expect(toOpenAIRequest(upstream, 'u', false).max_tokens ?? Infinity).toBeLessThanOrEqual(reserved);
        let anthropicMax: number | undefined;
        try {
          anthropicMax = toAnthropicRequest(upstream, 'u', false).max_tokens;
        } catch {
          anthropicMax = undefined; // a 400 (the client's cap leaves no room past its reasoning budget)
        }
        if (anthropicMax !== undefined) expect(anthropicMax).toBeLessThanOrEqual(reserved);
      }),
      { seed: 20_121, numRuns: 2_000 },
    );
  });

  it("reserves chat's max_completion_tokens over max_tokens, as the parser honours it", () => {
    const client = { model: 'm', ...MESSAGES.chat, max_tokens: 1, max_completion_tokens: 4096 };
    expect(reservedOutputCap('chat', client, undefined)).toBe(4096);
    expect(clientFormat('chat').parse(client, { reasoningExcludeSuffix: false }).request.maxTokens).toBe(4096);
  });

  it("ignores another format's cap field, as that format's parser does", () => {
    expect(reservedOutputCap('responses', { max_tokens: 1 }, 8000)).toBe(8000);
    expect(reservedOutputCap('messages', { max_completion_tokens: 1, max_tokens: 20 }, 8000)).toBe(20);
  });

  it('sends the reserved cap when the client set none, so an upstream default cannot exceed it', () => {
    const parsed = clientFormat('responses').parse({ model: 'm', input: 'hi' }, { reasoningExcludeSuffix: false }).request;
    expect(withinReservedOutput(parsed, 512).maxTokens).toBe(512);
    expect(parsed.maxTokens).toBeUndefined();
  });

  it('clamps a cap above the reservation', () => {
    const parsed = clientFormat('chat').parse({ model: 'm', ...MESSAGES.chat, max_tokens: 9000 }, { reasoningExcludeSuffix: false }).request;
    expect(withinReservedOutput(parsed, 100).maxTokens).toBe(100);
  });
});
