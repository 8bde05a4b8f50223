/**
 * Forward-compatible parsing (docs/api.md, "Values the gateway does not know"): a value the gateway
 * does not know in a field that only steers the upstream is served, passed on to an upstream that
 * speaks the client's format and ignored by one that does not; the fields the gateway acts on stay
 * strict. The motivating client: Claude Code 2.1.332, whose `thinking.display: "updates"` (behind
 * the `thinking-display-updates-2026-08-18` beta) used to be a 400.
 */
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { api, createAccount, TestAccount } from '../support/api';
import { anthropicClient, fakeRequestsMentioning, marker, openaiClient } from '../support/clients';
import { FAKE_SIGNATURE, PROGRESS_SIGNATURE, PROGRESS_UPDATE, UPDATES_BETA } from '../support/fake-upstreams';

/** The headers Claude Code sends with its requests, beta flags included. */
const CLAUDE_CODE_HEADERS = {
  'anthropic-beta': [
    'claude-code-20250219',
    'interleaved-thinking-2025-05-14',
    'context-management-2025-06-27',
    'prompt-caching-scope-2026-01-05',
    'effort-2025-11-24',
    UPDATES_BETA,
  ].join(','),
  'anthropic-dangerous-direct-browser-access': 'true',
  'user-agent': 'claude-cli/2.1.332 (external, cli)',
  'x-app': 'cli',
};

const inputSchema = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
  $schema: 'http://json-schema.org/draft-07/schema#',
});

/** A turn of Claude Code 2.1.332, as it sends it: system blocks, its tools, adaptive thinking shown as updates, streamed. */
function claudeCodeBody(model: string, question: string): Record<string, unknown> {
  return {
    model,
    max_tokens: 32000,
    stream: true,
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.5e1; cc_entrypoint=cli;' },
      { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral' } },
      {
        type: 'text',
        text: '\nYou are an interactive CLI tool that helps users with software engineering tasks. Use the instructions below and the tools available to you to assist the user.',
        cache_control: { type: 'ephemeral' },
      },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>\nAs you answer the user, use the context of the working directory.\n</system-reminder>' },
          { type: 'text', text: question, cache_control: { type: 'ephemeral' } },
        ],
      },
    ],
    tools: [
      {
        name: 'Bash',
        description: 'Executes a given bash command in a persistent shell session with optional timeout.',
        input_schema: inputSchema(
          { command: { type: 'string', description: 'The command to execute' }, timeout: { type: 'number' }, description: { type: 'string' } },
          ['command'],
        ),
      },
      {
        name: 'Glob',
        description: 'Fast file pattern matching tool that works with any codebase size.',
        input_schema: inputSchema({ pattern: { type: 'string' }, path: { type: 'string' } }, ['pattern']),
      },
    ],
    metadata: { user_id: 'user_5f0c3a9e1b7d4c2a_account__session_7d1e2f3a-4b5c-4d6e-8f90-1a2b3c4d5e6f' },
    thinking: { type: 'adaptive', display: 'updates' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  };
}

describe('forward-compatible parsing', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  /** Claude Code's request through the Anthropic SDK it is built on: the stream's events, whole. */
  async function claudeCodeTurn(model: string, question: string): Promise<RawMessageStreamEvent[]> {
    const stream = await anthropicClient(account.masterKey).messages.create(claudeCodeBody(model, question) as any, { headers: CLAUDE_CODE_HEADERS });
    const events: RawMessageStreamEvent[] = [];
    for await (const event of stream as unknown as AsyncIterable<RawMessageStreamEvent>) events.push(event);
    return events;
  }

  /** Each content block of a stream: its type, thinking text and signature, or text. */
  function blocks(events: RawMessageStreamEvent[]): Record<string, string>[] {
    const out: Record<string, string>[] = [];
    for (const event of events) {
      if (event.type === 'content_block_start') out[event.index] = { type: event.content_block.type };
      if (event.type !== 'content_block_delta') continue;
      const block = out[event.index];
      const delta = event.delta as unknown as Record<string, string>;
      if (delta.type === 'thinking_delta') block.thinking = (block.thinking ?? '') + delta.thinking;
      if (delta.type === 'signature_delta') block.signature = delta.signature;
      if (delta.type === 'text_delta') block.text = (block.text ?? '') + delta.text;
    }
    return out;
  }

  describe("Claude Code's thinking.display: 'updates'", () => {
    it('is answered 200; an upstream that writes no progress notes shows no thinking, as omitted', async () => {
      const events = await claudeCodeTurn('sim-reasoner', 'What does a semicolon do in JavaScript?');
      expect(events[0].type).toBe('message_start');
      expect(events.at(-1)?.type).toBe('message_stop');
      const content = blocks(events);
      expect(content.map((block) => block.type)).toEqual(['text']);
      expect(content[0].text.length).toBeGreaterThan(0);
      // The reasoning was generated (and is billed), only not shown.
      const delta = events.find((event) => event.type === 'message_delta');
      expect(delta?.type === 'message_delta' && delta.usage.output_tokens).toBeGreaterThan(words(content[0].text));
    });

    it('reaches an Anthropic upstream as sent, with its beta flag, and its thinking blocks come back as it sent them', async () => {
      const mk = marker('updates');
      const events = await claudeCodeTurn('fake-anthropic-thinker', `Summarise ${mk}`);
      const [sent] = await fakeRequestsMentioning('anthropic', mk);
      expect(sent.body.thinking).toMatchObject({ display: 'updates' });
      expect(String(sent.headers['anthropic-beta']).split(',')).toEqual(CLAUDE_CODE_HEADERS['anthropic-beta'].split(','));
      expect(blocks(events)).toEqual([
        { type: 'thinking', signature: FAKE_SIGNATURE },
        { type: 'thinking', thinking: PROGRESS_UPDATE, signature: PROGRESS_SIGNATURE },
        { type: 'text', text: expect.stringContaining(mk) },
      ]);
    });
  });

  it('serves new effort levels, summary kinds, display modes and tool types in each format', async () => {
    const openai = openaiClient(account.masterKey);
    const chat = await openai.chat.completions.create({
      model: 'sim-reasoner',
      messages: [{ role: 'user', content: 'Hello' }],
      reasoning_effort: 'extreme',
      tools: [{ type: 'custom', custom: { name: 'grammar', format: { type: 'text' } } }],
    } as any);
    expect(chat.choices[0].message.content).toEqual(expect.any(String));
    const response = await openai.responses.create({ model: 'sim-reasoner', input: 'Hello', reasoning: { effort: 'ultra', summary: 'verbose' } } as any);
    expect(response.status).toBe('completed');
    const message = await anthropicClient(account.masterKey).messages.create({
      model: 'sim-reasoner',
      max_tokens: 2000,
      messages: [{ role: 'user', content: 'Hello' }],
      thinking: { type: 'adaptive', display: 'a-mode-from-2027' },
      output_config: { effort: 'huge' },
    } as any);
    // A display mode the gateway does not know is the default (shown), as if it were not sent.
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
  });

  it('keeps the fields the gateway acts on strict: a 400 naming the field, in the format of the route', async () => {
    const chat = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'Hello' }], reasoning_effort: 3 },
    });
    expect(chat.status).toBe(400);
    expect(chat.body.error).toMatchObject({ param: 'reasoning_effort', message: 'reasoning_effort: must be a string, got a number' });
    const messages = await api('POST', '/v1/messages', {
      key: account.masterKey,
      body: { model: 'sim-chat', max_tokens: 'lots', messages: [{ role: 'user', content: 'Hello' }], thinking: { type: 'adaptive', display: 'updates' } },
    });
    expect(messages.status).toBe(400);
    expect(messages.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/^max_tokens: /) } });
  });
});

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
