/**
 * The `inference.text` exchange between edge and router (libs/contracts
 * src/inference/text-generation.wire.ts): a payload that is not a valid request, sent straight on
 * NATS, is answered with an error frame naming the field, and the router keeps serving; under a
 * burst, each request's usage event (published by the router after its reply) reaches JetStream
 * and the ledger exactly once. A stream's events come as raw frames to an edge that asks for them
 * (`rawFrames`), as JSON `sse` frames to one of the previous release that does not; the raw frames
 * a router sends in one turn of its event loop cross joined as one message, and none waits longer.
 */
import { Subjects, type TextWireFrame } from '@gateway/contracts';
import { decodeFrame } from '@gateway/platform';
import { connect, createInbox, headers, type NatsConnection } from 'nats';
import { api, createAccount, ledgerEntry, TestAccount } from '../support/api';
import { suiteInfo } from '../support/suite-info';
import { UsageWatcher } from '../support/usage-events';

/** One answered message: its bytes as they came, and the frame they carry (`decodeFrame`: JSON or raw). */
interface Answered {
  data: Uint8Array;
  frame: TextWireFrame;
}

/** Sends `data` on inference.text and collects the messages answered, up to the terminal frame. */
async function answered(nats: NatsConnection, data: Uint8Array): Promise<Answered[]> {
  const inbox = createInbox();
  const subscription = nats.subscribe(inbox, { timeout: 10_000 });
  nats.publish(Subjects.inferenceText, data, { reply: inbox, headers: headers() });
  const received: Answered[] = [];
  for await (const message of subscription) {
    const frame = decodeFrame(message.data) as TextWireFrame;
    received.push({ data: message.data, frame });
    if (frame.kind === 'end' || frame.kind === 'error') break;
  }
  subscription.unsubscribe();
  return received;
}

/** The frames answered, up to the terminal one. */
const exchange = async (nats: NatsConnection, data: Uint8Array): Promise<TextWireFrame[]> => (await answered(nats, data)).map(({ frame }) => frame);

const valid = () => ({
  accountId: 'acct_wire',
  keyId: 'key_wire',
  keyType: 'master',
  maskedKey: 'sk-...wire',
  ip: '127.0.0.1',
  requestId: `req_wire_${Math.random().toString(16).slice(2)}`,
  format: 'chat',
  body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] },
});

describe('inference.text on the wire', () => {
  let nats: NatsConnection;
  let account: TestAccount;

  beforeAll(async () => {
    nats = await connect({ servers: suiteInfo().env.NATS_URL.split(','), name: 'gateway-e2e-wire' });
    account = createAccount('enterprise', '100');
  });

  afterAll(async () => {
    await nats?.close();
  });

  const encode = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

  it('sends a stream’s events as raw frames when asked (the bytes the client gets, unescaped), and as JSON `sse` frames otherwise', async () => {
    const streamed = (rawFrames?: boolean) => ({
      ...valid(),
      accountId: account.accountId,
      body: { model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'Say "hi" in three languages' }] },
      ...(rawFrames === undefined ? {} : { rawFrames }),
    });
    const raw = await answered(nats, encode(streamed(true)));
    const isAnswer = ({ frame }: Answered) => frame.kind !== 'heartbeat' && frame.kind !== 'end';
    const answer = raw.filter(isAnswer).map(({ frame }) => frame as { kind: string; events?: number; body?: Uint8Array; router?: string; last?: boolean });
    expect(raw[raw.length - 1].frame).toEqual({ kind: 'end' });
    expect(answer.length).toBeGreaterThanOrEqual(1);
    // Every answer message: the mark byte, a JSON head, a line feed, the events as they are.
    for (const { data } of raw.filter(isAnswer)) expect(data[0]).toBe(0x1e);
    for (const frame of answer) expect(frame).toMatchObject({ kind: 'sse-bytes', events: expect.any(Number), body: expect.any(Uint8Array) });
    expect(answer[0].router).toEqual(expect.any(String));
    expect(answer.slice(1).every((frame) => frame.router === undefined)).toBe(true);
    expect(answer[answer.length - 1].last).toBe(true);
    const text = answer.map((frame) => Buffer.from(frame.body!).toString('utf8')).join('');
    const dataLines = text.split('\n\n').filter((event) => event.startsWith('data: '));
    // The events counted in the heads are the events sent; their JSON is the chat chunks, escapes intact.
    expect(answer.reduce((sum, frame) => sum + frame.events!, 0)).toBe(dataLines.length);
    // The simulator (no token delay) sends its events in one turn: they cross joined, fewer messages than events.
    expect(answer.length).toBeLessThan(dataLines.length);
    expect(dataLines[dataLines.length - 1]).toBe('data: [DONE]');
    const chunks = dataLines.slice(0, -1).map((line) => JSON.parse(line.slice('data: '.length)) as { object: string });
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);

    // A request without the flag (an edge of the previous release): the same answer as `sse` frames.
    const json = (await exchange(nats, encode(streamed()))) as { kind: string; frames?: string[] }[];
    const jsonAnswer = json.filter((frame) => frame.kind !== 'heartbeat' && frame.kind !== 'end');
    expect(jsonAnswer.every((frame) => frame.kind === 'sse' && Array.isArray(frame.frames))).toBe(true);
    const jsonText = jsonAnswer.flatMap((frame) => frame.frames!).join('');
    expect(jsonText.split('\n\n').filter((event) => event.startsWith('data: '))).toHaveLength(dataLines.length);
  });

  it('sends a stream’s events as they come: events 40 ms apart are not held for the ones after them', async () => {
    const request = {
      ...valid(),
      accountId: account.accountId,
      rawFrames: true,
      body: { model: 'sim-slow', stream: true, messages: [{ role: 'user', content: 'Say "hi" in three languages' }] },
    };
    const frames = (await exchange(nats, encode(request))).filter((frame) => frame.kind === 'sse-bytes') as { events: number; body: Uint8Array }[];
    const events = frames.reduce((sum, frame) => sum + frame.events, 0);
    const dataLines = frames
      .map((frame) => Buffer.from(frame.body).toString('utf8'))
      .join('')
      .split('\n\n')
      .filter((event) => event.startsWith('data: '));
    expect(events).toBe(dataLines.length);
    // Each delayed token left on its own turn: more messages than the two undelayed ends (start, finish) could make.
    expect(frames.length).toBeGreaterThan(2);
  });

  it.each([
    ['a missing field', { ...valid(), keyId: undefined }, 'keyId', /keyId is required/],
    ['a field of the wrong type', { ...valid(), body: 'hello' }, 'body', /body must be object/],
    ['a value outside its set', { ...valid(), format: 'xml' }, 'format', /format must be one of chat, responses, messages/],
    ['a bound broken', { ...valid(), reservedOutputTokens: 0 }, 'reservedOutputTokens', /reservedOutputTokens must be >= 1/],
  ])('a payload with %s gets one error frame naming the field', async (_case, payload, param, message) => {
    const received = await exchange(nats, encode(payload));
    expect(received).toEqual([{ kind: 'error', error: { code: 'invalid_request', message: expect.stringMatching(message), param } }]);
  });

  it('a payload that is not JSON gets an error frame, and the router keeps serving', async () => {
    expect(await exchange(nats, encode('{not json'))).toEqual([
      { kind: 'error', error: { code: 'invalid_request', message: 'The inference.text payload is not JSON' } },
    ]);
    // A valid payload straight on NATS: the router answers it (404 for a model it lacks), then `end`.
    const answered = await exchange(nats, encode(valid()));
    expect(answered.filter((frame) => frame.kind !== 'heartbeat')).toEqual([
      { kind: 'json', status: 404, body: expect.objectContaining({ error: expect.objectContaining({ param: 'model' }) }), last: true },
      { kind: 'end' },
    ]);
    const response = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'still there?' }] },
    });
    expect(response.status).toBe(200);
  });

  it('under a burst, each request has its one usage event and one ledger entry, streams and whole replies alike', async () => {
    const watcher = await UsageWatcher.open();
    try {
      const burst = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          api('POST', '/v1/chat/completions', {
            key: account.masterKey,
            body: { model: 'sim-chat', messages: [{ role: 'user', content: `burst ${i}` }], stream: i % 3 === 0 },
          }),
        ),
      );
      expect(burst.map((response) => response.status)).toEqual(burst.map(() => 200));
      const ids = burst.map((response) => response.headers.get('x-request-id') as string);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of ids) {
        const events = await watcher.waitFor(id, { settleMs: 0 });
        expect(events).toHaveLength(1);
        expect(events[0].msgId).toBe(id);
        expect(events[0].event).toMatchObject({ requestId: id, status: 'success', model: 'sim-chat' });
        const entry = await ledgerEntry(account.masterKey, id);
        expect(entry).toMatchObject({ request_id: id });
      }
      // Duplicates would have arrived by now: still one event per request.
      for (const id of ids) expect(watcher.eventsFor(id)).toHaveLength(1);
    } finally {
      await watcher.close();
    }
  });
});
