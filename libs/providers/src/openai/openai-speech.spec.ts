import type { SpeechCall, SpeechEvent } from '@gateway/canonical';
import { UpstreamError, type UpstreamRoute } from '../provider-adapter';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../testing/fake-upstream';
import { OpenAIAdapter } from './openai.adapter';

describe('OpenAIAdapter speech', () => {
  let upstream: FakeUpstream;
  let adapter: OpenAIAdapter;
  let route: UpstreamRoute;
  const signal = () => new AbortController().signal;
  const call = (fields: Partial<SpeechCall> = {}): SpeechCall => ({
    model: 'public-tts',
    input: 'Hello there',
    voice: 'alloy',
    format: 'mp3',
    speed: 1,
    speedSet: false,
    ...fields,
  });
  const drain = async (events: AsyncIterable<SpeechEvent>) => {
    const seen: SpeechEvent[] = [];
    for await (const event of events) seen.push(event);
    return seen;
  };

  beforeEach(async () => {
    upstream = await startFakeUpstream();
    adapter = new OpenAIAdapter();
    route = { adapter: 'openai', baseUrl: `${upstream.baseUrl}/v1`, upstreamModel: 'upstream-tts', apiKey: 'sk-test' };
  });

  afterEach(async () => {
    await adapter.close();
    await upstream.close();
  });

  it('posts the fields the client set and passes the audio on chunk by chunk, before the upstream finished', async () => {
    let finish: () => void = () => undefined;
    upstream.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'audio/flac' });
      response.write(Buffer.from('first'));
      finish = () => response.end(Buffer.from('second'));
    });
    const stream = await adapter.speak!(route, call({ format: 'flac', instructions: 'softly', speed: 1.25, speedSet: true, voice: { id: 'v1' } }), signal());
    expect(stream.contentType).toBe('audio/flac');
    const events = stream.events[Symbol.asyncIterator]();
    // The first chunk arrives while the upstream still holds the rest.
    expect(await events.next()).toEqual({ done: false, value: { kind: 'audio', bytes: Buffer.from('first') } });
    finish();
    const rest: SpeechEvent[] = [];
    for (let next = await events.next(); !next.done; next = await events.next()) rest.push(next.value);
    expect(Buffer.concat(rest.map((event) => (event.kind === 'audio' ? event.bytes : Buffer.alloc(0)))).toString()).toBe('second');
    expect(upstream.requests[0].url).toBe('/v1/audio/speech');
    expect(upstream.requests[0].headers.authorization).toBe('Bearer sk-test');
    expect(upstream.requests[0].body).toEqual({
      model: 'upstream-tts',
      input: 'Hello there',
      voice: { id: 'v1' },
      response_format: 'flac',
      instructions: 'softly',
      speed: 1.25,
    });
  });

  it('reads the audio deltas and the usage of an SSE answer', async () => {
    upstream.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`data: ${JSON.stringify({ type: 'speech.audio.delta', audio: Buffer.from('ab').toString('base64') })}\n\n`);
      response.write(`data: ${JSON.stringify({ type: 'speech.audio.delta', audio: Buffer.from('cd').toString('base64') })}\n\n`);
      response.end(`data: ${JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens: 3, output_tokens: 40, total_tokens: 43 } })}\n\n`);
    });
    const stream = await adapter.speak!(route, call({ streamFormat: 'sse' }), signal());
    expect(stream.contentType).toBe('audio/mpeg');
    expect(await drain(stream.events)).toEqual([
      { kind: 'audio', bytes: Buffer.from('ab') },
      { kind: 'audio', bytes: Buffer.from('cd') },
      { kind: 'usage', inputTokens: 3, outputTokens: 40 },
    ]);
    expect(upstream.requests[0].body).toMatchObject({ stream_format: 'sse' });
  });

  it('throws an upstream refusal before resolving (so the route fallback applies), with its status and message', async () => {
    upstream.handle((_request, response) => sendJson(response, 400, { error: { message: 'unknown voice' } }));
    await expect(adapter.speak!(route, call(), signal())).rejects.toMatchObject({ status: 400, message: 'unknown voice' });
    upstream.handle((_request, response) => sendJson(response, 503, { error: { message: 'busy' } }));
    const error = await adapter.speak!(route, call({ streamFormat: 'sse' }), signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 503, retryable: true });
  });
});
