import { type KeysChangedEvent, Rpc, type StreamContract, Subjects } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';
import { connect, createInbox, type NatsConnection } from 'nats';
import { Observable, type Subscriber, TimeoutError } from 'rxjs';
import { NatsRpcClient, NO_RESPONDERS, type ReceivedFrame } from './client';
import { NatsTransportServer } from './server';
import { decodeFrame, RawFrame } from './wire';
import { BUNDLE_TOKEN, forEachBundledFrame, MAX_BUNDLE_LENGTH } from './frame-bundles';

// eslint-disable-next-line @nx/enforce-module-boundaries
import { startTestNatsServer, type TestNatsServer } from '../../../../tools/jest/nats-test-server';

/**
 * The transport and its client against a real NATS server of the test's own (the subjects are the
 * real ones, so a suite running on this machine must not hear them): the wire every service speaks.
 */
describe('NATS transport (server and client on a real NATS server)', () => {
  let natsServer: TestNatsServer | undefined;
  let url: string;
  let server: NatsTransportServer;
  let connection: NatsConnection;
  let client: NatsRpcClient;
  const received: unknown[] = [];

  beforeAll(async () => {
    natsServer = await startTestNatsServer();
    url = natsServer.url;
    server = new NatsTransportServer({ servers: url, queue: 'transport-test' });
    // What a controller's @Handles(...) methods register, without the Nest application around them.
    server.addHandler(Subjects.masterKeyRegenerate, async (payload: { accountId: string }) => {
      received.push(payload);
      if (payload.accountId === 'missing') throw new DomainError(ErrorCode.NotFound, 'No such account', 'accountId').toPayload();
      if (payload.accountId === 'boom') throw new Error('a stack that must not leave the service');
      return { key: `ek-for-${payload.accountId}` };
    });
    server.addHandler(
      Subjects.inferenceText,
      async (payload: { body: { model?: string } }) =>
        new Observable((subscriber) => {
          if (payload.body.model === 'burst') return burst(subscriber);
          if (payload.body.model === 'big') return big(subscriber);
          if (payload.body.model === 'together') return together(subscriber);
          if (payload.body.model === 'huge') return huge(subscriber);
          subscriber.next({ kind: 'json', status: 200, body: payload.body });
          subscriber.next({ kind: 'sse', frames: ['data: [DONE]'] });
          // Text that JSON would escape, a line feed and bytes beyond ASCII, as they are.
          subscriber.next(new RawFrame({ kind: 'sse-bytes', events: 2, last: true }, 'data: {"a":"é\\n€😀"}\n\ndata: [DONE]\n\n'));
          subscriber.complete();
        }),
    );
    server.addHandler(Subjects.keysChanged, async (payload: unknown) => void received.push(payload), true);
    await listen(server);
    connection = await connect({ servers: url });
    client = new NatsRpcClient({ nats: connection });
  });

  afterAll(async () => {
    await connection?.close();
    await server?.close();
    natsServer?.stop();
  });

  beforeEach(() => {
    received.length = 0;
  });

  it('answers a request with the contract’s JSON and no envelope; unknown properties never reach the handler', async () => {
    const payload = { accountId: 'acc_1', extra: 'dropped' } as unknown as { accountId: string };
    await expect(client.request(Rpc.masterKeyRegenerate, payload, 2000)).resolves.toEqual({ key: 'ek-for-acc_1' });
    expect(received).toEqual([{ accountId: 'acc_1' }]);

    const raw = await connection.request(Subjects.masterKeyRegenerate, JSON.stringify({ accountId: 'acc_2' }), { timeout: 2000 });
    expect(JSON.parse(new TextDecoder().decode(raw.data))).toEqual({ key: 'ek-for-acc_2' });
  });

  it('refuses a payload its contract refuses, naming the field, before the handler runs', async () => {
    await expect(client.request(Rpc.masterKeyRegenerate, { accountId: 42 } as unknown as { accountId: string }, 2000)).rejects.toEqual({
      code: ErrorCode.InvalidRequest,
      message: 'accountId must be string',
      param: 'accountId',
    });
    await expect(client.request(Rpc.masterKeyRegenerate, {} as { accountId: string }, 2000)).rejects.toMatchObject({
      code: ErrorCode.InvalidRequest,
      param: 'accountId',
      message: 'accountId is required',
    });
    const notJson = await connection.request(Subjects.masterKeyRegenerate, 'not json', { timeout: 2000 });
    expect(JSON.parse(new TextDecoder().decode(notJson.data))).toEqual({
      kind: 'error',
      error: { code: ErrorCode.InvalidRequest, message: `The ${Subjects.masterKeyRegenerate} payload is not JSON` },
    });
    expect(received).toEqual([]);
  });

  it("carries a service's domain error as it is, and an unexpected one as an internal error without its text", async () => {
    await expect(client.request(Rpc.masterKeyRegenerate, { accountId: 'missing' }, 2000)).rejects.toEqual({
      code: ErrorCode.NotFound,
      message: 'No such account',
      param: 'accountId',
    });
    await expect(client.request(Rpc.masterKeyRegenerate, { accountId: 'boom' }, 2000)).rejects.toEqual({
      code: ErrorCode.Internal,
      message: 'Internal error',
    });
  });

  it('delivers an event to its handler, drops one its contract refuses, and answers neither', async () => {
    client.emit(Rpc.keysChanged, { accountId: 'acc_refused', keyHashes: [] } as unknown as KeysChangedEvent);
    client.emit(Rpc.keysChanged, { accountId: 'acc_event', keyHashes: [], reason: 'proxy_removed' });
    await connection.flush();
    await waitFor(() => received.length === 1);
    expect(received).toEqual([{ accountId: 'acc_event', keyHashes: [], reason: 'proxy_removed' }]);
  });

  it('says when nobody serves a subject, and times out a request nobody answers in time', async () => {
    await server.stopListening();
    try {
      await expect(client.request(Rpc.masterKeyRegenerate, { accountId: 'acc_1' }, 2000)).rejects.toBe(NO_RESPONDERS);
      const silent = await connection.subscribe(Subjects.masterKeyRegenerate);
      await connection.flush();
      await expect(client.request(Rpc.masterKeyRegenerate, { accountId: 'acc_1' }, 200)).rejects.toBeInstanceOf(TimeoutError);
      silent.unsubscribe();
      expect(client.open).toBe(0);
    } finally {
      // The handlers come back for the tests after this one.
      await server.close();
      await listen(server);
    }
  });

  it('subscribes only the subjects `serves` accepts: the others answer "no responders" at once, with no subscriber to wait for', async () => {
    const partial = new NatsTransportServer({ servers: url, queue: 'transport-test', serves: (subject) => subject === Subjects.inferenceEmbeddings });
    const reply = async () => new Observable((subscriber) => subscriber.complete());
    partial.addHandler(Subjects.inferenceEmbeddings, reply);
    partial.addHandler(Subjects.inferenceImages, reply);
    await listen(partial);
    try {
      await expect(collect(mediaPayload({ model: 'e', input: 'x' }), Rpc.inferenceEmbeddings)).resolves.toEqual([{ kind: 'end' }]);
      await expect(collect(mediaPayload({ model: 'i', prompt: 'x' }), Rpc.inferenceImages)).resolves.toEqual([{ kind: 'error', error: NO_RESPONDERS }]);
    } finally {
      await partial.close();
    }
  });

  it('counts a handled stream as work in progress until its last frame is sent, and a failed one until its error frame', async () => {
    let active = 0;
    const observed = new NatsTransportServer({
      servers: url,
      queue: 'transport-test',
      serves: (subject) => subject === Subjects.inferenceEmbeddings,
      observability: {
        beginWork: () => {
          active++;
          return () => active--;
        },
      },
    });
    let finishStream: (() => void) | undefined;
    observed.addHandler(
      Subjects.inferenceEmbeddings,
      async (payload: { body: { model: string } }) =>
        new Observable((subscriber) => {
          subscriber.next({ kind: 'heartbeat' });
          if (payload.body.model === 'fails') return subscriber.error({ code: ErrorCode.Internal, message: 'Internal error' });
          finishStream = () => subscriber.complete();
        }),
    );
    await listen(observed);
    try {
      const frames: ReceivedFrame<unknown>[] = [];
      const ended = collect(mediaPayload({ model: 'e', input: 'x' }), Rpc.inferenceEmbeddings, frames);
      await waitFor(() => frames.length === 1);
      expect(active).toBe(1);
      finishStream?.();
      await ended;
      expect(active).toBe(0);
      expect(frames).toEqual([{ kind: 'heartbeat' }, { kind: 'end' }]);

      const failed = await collect(mediaPayload({ model: 'fails', input: 'x' }), Rpc.inferenceEmbeddings);
      expect(failed).toEqual([{ kind: 'heartbeat' }, { kind: 'error', error: { code: ErrorCode.Internal, message: 'Internal error' } }]);
      expect(active).toBe(0);
    } finally {
      await observed.close();
    }
  });

  it("streams a stream contract's frames, then exactly one end frame; a refused payload is the stream's one error frame", async () => {
    const request = { ...textRequest, body: { model: 'sim' } };
    const frames = await collect(JSON.stringify(request));
    expect(frames).toEqual([
      { kind: 'json', status: 200, body: { model: 'sim' } },
      { kind: 'sse', frames: ['data: [DONE]'] },
      { kind: 'sse-bytes', events: 2, last: true, body: expect.any(Uint8Array) },
      { kind: 'end' },
    ]);
    // A raw frame's body arrives as the bytes sent: nothing escaped, nothing parsed.
    const body = (frames[2] as { body: Uint8Array }).body;
    expect(Buffer.from(body).toString('utf8')).toBe('data: {"a":"é\\n€😀"}\n\ndata: [DONE]\n\n');
    await expect(collect(JSON.stringify({ ...request, format: 'fax' }))).resolves.toEqual([
      { kind: 'error', error: expect.objectContaining({ code: ErrorCode.InvalidRequest, param: 'format' }) },
    ]);
  });

  it('joins the raw frames a stream sends before its next write into one message, in order, and keeps any other frame between them', async () => {
    const frames = await collect(JSON.stringify({ ...textRequest, body: { model: 'burst' } }));
    const text = (frame: ReceivedFrame<unknown>) => Buffer.from((frame as { body: Uint8Array }).body).toString('utf8');
    // 50 frames of one turn: one message. A frame that does not join (the base RawFrame) stays on its own.
    expect(frames.map((frame) => (frame as { kind: string }).kind)).toEqual(['sse-bytes', 'heartbeat', 'sse-bytes', 'plain', 'plain', 'sse-bytes', 'end']);
    expect(frames[0]).toMatchObject({ kind: 'sse-bytes', events: 50, outputTokens: 50 });
    expect(text(frames[0])).toBe(Array.from({ length: 50 }, (_, i) => `data: ${i}\n\n`).join(''));
    expect(frames[2]).toMatchObject({ events: 2, outputTokens: 52 });
    expect(text(frames[2])).toBe('data: 50\n\ndata: 51\n\n');
    expect([text(frames[3]), text(frames[4])]).toEqual(['p1', 'p2']);
    // The last one, sent on a later turn, arrives as it was sent.
    expect(frames[5]).toMatchObject({ events: 1, outputTokens: 53, last: true });
    expect(text(frames[5])).toBe('data: [DONE]\n\n');
  });

  it('does not hold a long turn’s output to its end: past 32 KiB held, what is held leaves at once, in order', async () => {
    const frames = await collect(JSON.stringify({ ...textRequest, body: { model: 'big' } }));
    const events = frames.filter((frame) => (frame as { kind: string }).kind === 'sse-bytes') as { events: number; body: Uint8Array }[];
    // 100 frames of 1,000 characters in one turn: several messages of about 32 KiB, not one of 100 KB.
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.every((frame) => frame.body.length <= 33 * 1024)).toBe(true);
    expect(events.reduce((sum, frame) => sum + frame.events, 0)).toBe(100);
    expect(events.map((frame) => Buffer.from(frame.body).toString('utf8')).join('')).toBe(bigText);
    expect(frames[frames.length - 1]).toEqual({ kind: 'end' });
  });

  it("sends the frames of several streams of one caller in one message per turn, each stream's in order, and each reaches its own exchange", async () => {
    const spy = await connect({ servers: url });
    const messages: { subject: string; data: Uint8Array }[] = [];
    const inboxes = spy.subscribe('_INBOX.>', { callback: (_error, message) => messages.push({ subject: message.subject, data: message.data }) });
    await spy.flush();
    try {
      const streams = await Promise.all(
        ['s0', 's1', 's2'].map((id) => collect(JSON.stringify({ ...textRequest, requestId: id, body: { model: 'together' } }))),
      );
      // Each stream got its own frames, in the order sent, its end last.
      for (const frames of streams) {
        expect(frames.map((frame) => (frame as { kind: string }).kind)).toEqual(['heartbeat', 'json', 'sse-bytes', 'end']);
        const body = (frames[1] as { body: { stream: number } }).body;
        expect(Buffer.from((frames[2] as { body: Uint8Array }).body).toString('utf8')).toBe(`data: ${body.stream}\n\n`);
      }
      expect(streams.map((frames) => (frames[1] as { body: { stream: number } }).body.stream).sort()).toEqual([0, 1, 2]);
      // On the wire: the three streams' frames, emitted in one turn, crossed as one bundle. (The
      // NATS server routed them to the spy before they reached the client: the spy's flush answer
      // comes after them.)
      await spy.flush();
      expect(messages).toHaveLength(1);
      expect(messages[0].subject).toMatch(new RegExp(`\\.${BUNDLE_TOKEN}$`));
      const tokens: string[] = [];
      forEachBundledFrame(messages[0].data, (token) => tokens.push(token));
      expect(tokens).toHaveLength(12);
      expect(new Set(tokens).size).toBe(3);
    } finally {
      inboxes.unsubscribe();
      await spy.close();
    }
  });

  it('sends a caller that does not take bundles one message per frame, on its reply subject', async () => {
    const inbox = createInbox();
    const messages: { subject: string; frame: unknown }[] = [];
    const done = new Promise<void>((resolve) =>
      connection.subscribe(inbox, {
        callback: (_error, message) => {
          const frame = decodeFrame(message.data);
          messages.push({ subject: message.subject, frame });
          if ((frame as { kind: string }).kind === 'end') resolve();
        },
      }),
    );
    connection.publish(Subjects.inferenceText, JSON.stringify({ ...textRequest, body: { model: 'huge' } }), { reply: inbox });
    await done;
    expect(messages.map(({ subject }) => subject)).toEqual([inbox, inbox, inbox, inbox]);
    expect(messages.map(({ frame }) => (frame as { kind: string }).kind)).toEqual(['heartbeat', 'json', 'heartbeat', 'end']);
  });

  it('sends a frame too long for a bundle alone, after the bundle that holds the frames before it, and the rest in the next', async () => {
    const spy = await connect({ servers: url });
    const subjects: string[] = [];
    const inboxes = spy.subscribe('_INBOX.>', { callback: (_error, message) => subjects.push(message.subject) });
    await spy.flush();
    try {
      const frames = await collect(JSON.stringify({ ...textRequest, body: { model: 'huge' } }));
      expect(frames.map((frame) => (frame as { kind: string }).kind)).toEqual(['heartbeat', 'json', 'heartbeat', 'end']);
      expect((frames[1] as { body: string }).body).toHaveLength(MAX_BUNDLE_LENGTH + 1);
      await spy.flush();
      expect(subjects).toHaveLength(3);
      expect(subjects[0]).toMatch(new RegExp(`\\.${BUNDLE_TOKEN}$`));
      expect(subjects[1]).not.toMatch(new RegExp(`\\.${BUNDLE_TOKEN}$`));
      expect(subjects[2]).toMatch(new RegExp(`\\.${BUNDLE_TOKEN}$`));
    } finally {
      inboxes.unsubscribe();
      await spy.close();
    }
  });

  /** A stream's frames up to its end or error frame; `frames` holds them as they come. */
  function collect(payload: string, contract: StreamContract = Rpc.inferenceText, frames: ReceivedFrame<unknown>[] = []): Promise<ReceivedFrame<unknown>[]> {
    return new Promise((resolve) => {
      const exchange = client.stream(contract, payload, (frame) => {
        frames.push(frame);
        const kind = (frame as { kind?: string }).kind;
        if (kind === 'end' || kind === 'error') {
          exchange.close();
          resolve(frames);
        }
      });
    });
  }
});

/** A media subject's payload (embeddings, images) with `body`. */
function mediaPayload(body: object): string {
  return JSON.stringify({ accountId: 'acc_1', keyId: 'key_1', keyType: 'master', maskedKey: 'ek-…abcd', ip: '127.0.0.1', requestId: 'req_1', body });
}

const textRequest = {
  accountId: 'acc_1',
  keyId: 'key_1',
  keyType: 'master',
  maskedKey: 'ek-…abcd',
  ip: '127.0.0.1',
  requestId: 'req_1',
  format: 'chat',
} as const;

/** A raw frame that joins the next one of its kind, as the router's `sse-bytes` frames do. */
class JoiningFrame extends RawFrame {
  constructor(
    override readonly head: { kind: string; events: number; outputTokens: number; last?: boolean },
    body: string,
  ) {
    super(head, body);
  }

  override joinedWith(later: RawFrame): RawFrame | undefined {
    if (!(later instanceof JoiningFrame)) return undefined;
    const head = { ...later.head, events: this.head.events + later.head.events };
    return new JoiningFrame(head, this.body + later.body);
  }
}

/** A burst of 50 frames in one turn, a heartbeat, 2 more, two that do not join, then the last on a later turn. */
function burst(subscriber: Subscriber<unknown>): void {
  const event = (i: number) => new JoiningFrame({ kind: 'sse-bytes', events: 1, outputTokens: i + 1 }, `data: ${i}\n\n`);
  for (let i = 0; i < 50; i++) subscriber.next(event(i));
  subscriber.next({ kind: 'heartbeat' });
  subscriber.next(event(50));
  subscriber.next(event(51));
  subscriber.next(new RawFrame({ kind: 'plain' }, 'p1'));
  subscriber.next(new RawFrame({ kind: 'plain' }, 'p2'));
  setTimeout(() => {
    subscriber.next(new JoiningFrame({ kind: 'sse-bytes', events: 1, outputTokens: 53, last: true }, 'data: [DONE]\n\n'));
    subscriber.complete();
  }, 0);
}

const bigEvent = (i: number) => `data: ${String(i).padStart(3, '0')}${'x'.repeat(990)}\n\n`;
const bigText = Array.from({ length: 100 }, (_, i) => bigEvent(i)).join('');

/** 100 joinable frames of 1,000 characters each, all in one turn. */
function big(subscriber: Subscriber<unknown>): void {
  for (let i = 0; i < 100; i++) subscriber.next(new JoiningFrame({ kind: 'sse-bytes', events: 1, outputTokens: i + 1 }, bigEvent(i)));
  subscriber.complete();
}

const waiting: Subscriber<unknown>[] = [];

/** Three streams emit together: once the third has arrived, each stream's frames in one turn, in turns of the streams. */
function together(subscriber: Subscriber<unknown>): void {
  waiting.push(subscriber);
  if (waiting.length < 3) return;
  const streams = waiting.splice(0);
  streams.forEach((stream) => stream.next({ kind: 'heartbeat' }));
  streams.forEach((stream, i) => stream.next({ kind: 'json', status: 200, body: { stream: i } }));
  streams.forEach((stream, i) => stream.next(new JoiningFrame({ kind: 'sse-bytes', events: 1, outputTokens: 1 }, `data: ${i}\n\n`)));
  streams.forEach((stream) => stream.complete());
}

/** A heartbeat, a JSON frame over the bundle limit, another heartbeat, the end: all in one turn. */
function huge(subscriber: Subscriber<unknown>): void {
  subscriber.next({ kind: 'heartbeat' });
  subscriber.next({ kind: 'json', status: 200, body: 'x'.repeat(MAX_BUNDLE_LENGTH + 1) });
  subscriber.next({ kind: 'heartbeat' });
  subscriber.complete();
}

/** Starts the server and waits until the NATS server has its subscriptions (a flush round trip). */
async function listen(server: NatsTransportServer): Promise<void> {
  await new Promise<void>((resolve, reject) => server.listen((error) => (error ? reject(error) : resolve())));
  await server.unwrap<NatsConnection>().flush();
}

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
