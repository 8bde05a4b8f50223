/**
 * The Responses API's WebSocket mode (`GET /v1/responses` upgraded), as the OpenAI Agents SDK's
 * websocket transport uses it: `response.create` messages answered with the SSE stream's events,
 * one response at a time, each billed like an HTTP request; conversation sessions over it; errors
 * as `error` events on a socket that stays open; and the socket closed on a bad key (at the
 * handshake), on key revocation, when idle and on shutdown.
 */
import { Agent, OpenAIConversationsSession, OpenAIProvider, Runner, setTracingDisabled, tool, type RunResult } from '@openai/agents';
import type { ChildProcess } from 'node:child_process';
import { WebSocket as UndiciWebSocket } from 'undici';
import WebSocket from 'ws';
import { z } from 'zod';
import { api, createAccount, createProxyKey, TestAccount } from '../support/api';
import { marker } from '../support/clients';
import { startExtraEdge, waitForExit } from '../support/processes';
import { suiteInfo } from '../support/suite-info';

const PRICE = { input: 0.5, output: 1.5 }; // sim-chat, credits per million tokens (config/models.yaml)
const cost = (usage: { input_tokens: number; output_tokens: number }) => (usage.input_tokens * PRICE.input + usage.output_tokens * PRICE.output) / 1e6;

const wsBase = (base: string) => base.replace(/^http/, 'ws');

// Node 20 has no global WebSocket (22 and later have undici's, which the SDK is written for).
(globalThis as { WebSocket?: unknown }).WebSocket ??= UndiciWebSocket;
setTracingDisabled(true);

function runner(key: string, base = suiteInfo().edgeA): { runner: Runner; provider: OpenAIProvider } {
  const provider = new OpenAIProvider({ apiKey: key, baseURL: `${base}/v1`, useResponses: true, useResponsesWebSocket: true });
  return { runner: new Runner({ modelProvider: provider, tracingDisabled: true }), provider };
}

const weather = tool({
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `Sunny, 21 C in ${city}`,
});

/** The account's ledger, oldest first, once it holds `count` entries. */
async function ledger(key: string, count: number): Promise<any[]> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const logs = await api('GET', '/v1/user/logs', { key });
    if (Array.isArray(logs.body) && logs.body.length >= count) return [...logs.body].reverse();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the ledger never held ${count} entries`);
}

/** Each model call of a run is one ledger entry with its usage, and the balance fell by their exact price. */
async function expectBilled(account: TestAccount, results: RunResult<any, any>[], credits: number): Promise<void> {
  const usages = results.flatMap((result) => result.rawResponses.map((response) => response.usage));
  const entries = await ledger(account.masterKey, usages.length);
  const sorted = (rows: unknown[][]) => rows.map((row) => JSON.stringify(row)).sort();
  expect(sorted(entries.map((entry) => [entry.route, entry.status, entry.input_tokens, entry.output_tokens]))).toEqual(
    sorted(usages.map((usage) => ['responses', 'success', usage.inputTokens, usage.outputTokens])),
  );
  const expected = entries.reduce((sum, entry) => sum + cost(entry), 0);
  expect(entries.every((entry) => Math.abs(entry.credits - cost(entry)) < 1e-12)).toBe(true);
  const me = await api('GET', '/v1/user/me', { key: account.masterKey });
  expect(Math.abs(me.body.credits - (credits - expected))).toBeLessThan(1e-9);
}

/** A raw socket, its messages as parsed JSON, and its close. */
interface Socket {
  ws: WebSocket;
  events: any[];
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves with the events from `from` up to the first whose type is in `types`. */
  until(types: string[], from?: number): Promise<any[]>;
}

function open(key: string, base = suiteInfo().edgeA): Promise<Socket> {
  const ws = new WebSocket(`${wsBase(base)}/v1/responses`, { headers: { authorization: `Bearer ${key}` } });
  const events: any[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    events.push(JSON.parse(data.toString()));
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const until = async (types: string[], from = 0): Promise<any[]> => {
    for (;;) {
      const index = events.findIndex((event, i) => i >= from && types.includes(event.type));
      if (index >= 0) return events.slice(from, index + 1);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, events, closed, until }));
    ws.once('error', reject);
  });
}

/** The HTTP answer to a handshake the edge refused. */
function refused(key: string): Promise<{ status: number; body: any }> {
  const ws = new WebSocket(`${wsBase(suiteInfo().edgeA)}/v1/responses`, { headers: { authorization: `Bearer ${key}` } });
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the handshake was accepted')));
    ws.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
  });
}

const TERMINAL = ['response.completed', 'response.incomplete', 'response.failed', 'error'];

describe('Responses over WebSocket', () => {
  let account: TestAccount;

  beforeEach(() => {
    account = createAccount('pro', '100');
  });

  it('the Agents SDK runs a tool round trip over the websocket transport, billed exactly', async () => {
    const { runner: run, provider } = runner(account.masterKey);
    try {
      const agent = new Agent({ name: 'weather', instructions: 'Answer briefly.', model: 'sim-chat', tools: [weather] });
      const result = await run.run(agent, 'Use get_weather for Oslo please');
      expect(result.rawResponses).toHaveLength(2);
      const types = result.newItems.map((item) => item.type);
      expect(types.slice(-3)).toEqual(['tool_call_item', 'tool_call_output_item', 'message_output_item']);
      expect(result.finalOutput).toEqual(expect.any(String));
      expect(String(result.finalOutput).length).toBeGreaterThan(0);
      await expectBilled(account, [result], 100);
    } finally {
      await provider.close();
    }
  });

  it('an OpenAIConversationsSession keeps the turns of runs over the websocket transport', async () => {
    const { runner: run, provider } = runner(account.masterKey);
    try {
      const session = new OpenAIConversationsSession({ apiKey: account.masterKey, baseURL: `${suiteInfo().edgeA}/v1` });
      const agent = new Agent({ name: 'memory', instructions: 'Answer briefly.', model: 'sim-chat' });
      const word = marker('ws');
      const first = await run.run(agent, `Remember the word ${word}`, { session });
      const second = await run.run(agent, 'Which word did I ask you to remember?', { session });
      const items = await session.getItems();
      const texts = items.map((item) => JSON.stringify(item));
      expect(texts.filter((text) => text.includes(word)).length).toBeGreaterThanOrEqual(1);
      expect(items.filter((item) => (item as { role?: string }).role === 'user')).toHaveLength(2);
      expect(items.filter((item) => (item as { role?: string }).role === 'assistant')).toHaveLength(2);
      await expectBilled(account, [first, second], 100);
    } finally {
      await provider.close();
    }
  });

  it('answers each response.create with the SSE events, one response at a time, errors as error events on an open socket', async () => {
    const socket = await open(account.masterKey);
    try {
      socket.ws.send(JSON.stringify({ type: 'response.create', model: 'sim-chat', input: 'Say hello' }));
      // A second response.create while the first runs is refused; the first still completes.
      socket.ws.send(JSON.stringify({ type: 'response.create', model: 'sim-chat', input: 'Say hello again' }));
      const first = (await socket.until(['response.completed'])).filter((event) => event.type !== 'error');
      expect(first[0]).toMatchObject({ type: 'response.created', response: { status: 'in_progress', model: 'sim-chat' } });
      expect(first.map((event) => event.type)).toContain('response.output_text.delta');
      const refusal = socket.events.find((event) => event.type === 'error');
      expect(refusal).toEqual({
        type: 'error',
        status: 409,
        error: expect.objectContaining({
          type: 'invalid_request_error',
          code: 'response_in_progress',
          message: expect.stringContaining('one response at a time'),
        }),
      });

      let from = socket.events.length;
      socket.ws.send(JSON.stringify({ type: 'response.create', model: 'no-such-model', input: 'hi' }));
      const missing = await socket.until(TERMINAL, from);
      expect(missing).toEqual([{ type: 'error', status: 404, error: expect.objectContaining({ message: expect.stringContaining('no-such-model') }) }]);

      from = socket.events.length;
      socket.ws.send('{not json');
      expect(await socket.until(['error'], from)).toEqual([{ type: 'error', status: 400, error: expect.objectContaining({ code: 'invalid_json' }) }]);

      from = socket.events.length;
      socket.ws.send(JSON.stringify({ type: 'response.cancel' }));
      expect(await socket.until(['error'], from)).toEqual([{ type: 'error', status: 400, error: expect.objectContaining({ param: 'type' }) }]);

      from = socket.events.length;
      socket.ws.send(JSON.stringify({ type: 'response.create', model: 'sim-chat', input: 'hi', background: true }));
      expect(await socket.until(['error'], from)).toEqual([{ type: 'error', status: 400, error: expect.objectContaining({ param: 'background' }) }]);

      from = socket.events.length;
      socket.ws.send(JSON.stringify({ type: 'response.create', model: 'sim-chat', input: 'hi', max_output_tokens: 'many' }));
      const invalid = await socket.until(TERMINAL, from);
      expect(invalid).toEqual([{ type: 'error', status: 400, error: expect.objectContaining({ param: 'max_output_tokens' }) }]);

      // Still open: the next response is served, and chained to the first by previous_response_id.
      from = socket.events.length;
      const firstId = first[first.length - 1].response.id;
      socket.ws.send(JSON.stringify({ type: 'response.create', model: 'sim-chat', input: 'and again', previous_response_id: firstId }));
      const next = await socket.until(TERMINAL, from);
      expect(next[next.length - 1]).toMatchObject({ type: 'response.completed', response: { previous_response_id: firstId } });
      // Two responses served and billed; the failed ones logged at no charge, as over HTTP.
      const entries = await ledger(account.masterKey, 4);
      expect(entries.map((entry) => entry.status).sort()).toEqual(['error', 'error', 'success', 'success']);
      expect(entries.filter((entry) => entry.status === 'error').map((entry) => entry.credits)).toEqual([0, 0]);
    } finally {
      socket.ws.close();
    }
  });

  it('takes the next response.create as soon as the last event of the previous one is out (as agents send it)', async () => {
    const socket = await open(account.masterKey);
    try {
      const ends: string[] = [];
      // Each request is sent from the handler of the previous response's last event, with no delay.
      await new Promise<void>((resolve) => {
        const next = () => socket.ws.send(JSON.stringify({ type: 'response.create', model: 'sim-chat', input: `turn ${ends.length}` }));
        socket.ws.on('message', (data) => {
          const event = JSON.parse(data.toString());
          if (!TERMINAL.includes(event.type)) return;
          ends.push(event.type === 'error' ? `error ${event.status}` : event.type);
          if (ends.length === 8) resolve();
          else next();
        });
        next();
      });
      expect(ends).toEqual(Array.from({ length: 8 }, () => 'response.completed'));
    } finally {
      socket.ws.close();
    }
  });

  it('refuses the handshake of a bad key with the HTTP 401, and tells a plain GET to upgrade', async () => {
    const bad = await refused('ek-not-a-key');
    expect(bad.status).toBe(401);
    expect(bad.body.error.message).toEqual(expect.any(String));
    const plain = await api('GET', '/v1/responses', { key: account.masterKey });
    expect(plain.status).toBe(426);
    expect(plain.headers.get('upgrade')).toBe('websocket');
    expect(plain.body.error.message).toContain('Upgrade: websocket');
  });

  it('closes the socket of a proxy key when the key is disabled or deleted (1008), and its next handshake is a 401', async () => {
    const proxy = await createProxyKey(account.masterKey, { allocated_ammount: 5 });
    const socket = await open(proxy.key);
    socket.ws.send(JSON.stringify({ type: 'response.create', model: 'sim-chat', input: 'hi' }));
    await socket.until(TERMINAL);
    const deleted = await api('DELETE', `/v1/auth/proxy/delete/${encodeURIComponent(proxy.key)}`, { key: account.masterKey });
    expect(deleted.status).toBeLessThan(300);
    expect(await socket.closed).toEqual({ code: 1008, reason: 'API key revoked or disabled' });
    expect((await refused(proxy.key)).status).toBe(401);
  });
});

describe('Responses over WebSocket: idle sockets and shutdown', () => {
  let idleEdge: { edge: ChildProcess; base: string };
  let stoppingEdge: { edge: ChildProcess; base: string };

  beforeAll(async () => {
    [idleEdge, stoppingEdge] = await Promise.all([
      startExtraEdge({ RESPONSES_WS_IDLE_SECONDS: '1' }, 'ws-idle-edge'),
      startExtraEdge({ SHUTDOWN_GRACE_MS: '20000' }, 'ws-stopping-edge'),
    ]);
  }, 60_000);

  afterAll(() => {
    idleEdge.edge.kill('SIGKILL');
    stoppingEdge.edge.kill('SIGKILL');
  });

  it('closes a socket with no response in progress after RESPONSES_WS_IDLE_SECONDS (1000)', async () => {
    const account = createAccount('pro', '100');
    const socket = await open(account.masterKey, idleEdge.base);
    socket.ws.send(JSON.stringify({ type: 'response.create', model: 'sim-chat', input: 'hi' }));
    expect((await socket.until(TERMINAL)).pop().type).toBe('response.completed');
    expect(await socket.closed).toEqual({ code: 1000, reason: 'idle timeout' });
  });

  it('on shutdown, finishes the response in progress, then closes with 1001', async () => {
    const account = createAccount('pro', '100');
    const idle = await open(account.masterKey, stoppingEdge.base);
    const busy = await open(account.masterKey, stoppingEdge.base);
    busy.ws.send(JSON.stringify({ type: 'response.create', model: 'sim-chat', input: 'Write a long story', max_output_tokens: 4000 }));
    await busy.until(['response.created']);
    stoppingEdge.edge.kill('SIGTERM');
    expect(await idle.closed).toEqual({ code: 1001, reason: 'server shutting down' });
    const events = await busy.until(TERMINAL);
    expect(events[events.length - 1].type).toBe('response.completed');
    expect(await busy.closed).toEqual({ code: 1001, reason: 'server shutting down' });
    await waitForExit(stoppingEdge.edge.pid!);
    // The response that finished during the drain was billed.
    expect((await ledger(account.masterKey, 1)).map((entry) => entry.status)).toEqual(['success']);
  });
});
