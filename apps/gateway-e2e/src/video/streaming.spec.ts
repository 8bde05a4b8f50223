/**
 * POST /v1/videos/generations: a stream of JSON lines — heartbeats while the job is pending, progress
 * while it runs, one final object — read line by line as the spec tells clients to.
 */
import { api, createAccount, TestAccount } from '../support/api';
import { fakeRequests, newRequestId } from '../support/clients';
import { FAKE_OPENAI_KEY, FAKE_VIDEO_BYTES, FAKE_VIDEO_FAILURE } from '../support/fake-upstreams';
import { aviHeader, isFinal, isHeartbeat, isProgress, VideoStream } from '../support/video-stream';

async function download(url: string): Promise<{ status: number; contentType: string | null; body: Buffer }> {
  const response = await fetch(url);
  return { status: response.status, contentType: response.headers.get('content-type'), body: Buffer.from(await response.arrayBuffer()) };
}

describe('video generation stream', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('streams heartbeats and progress, then the result, whose signed URL downloads a real AVI', async () => {
    const requestId = newRequestId('video');
    const stream = await VideoStream.open({
      key: account.masterKey,
      body: { model: 'sim-video-quick', prompt: 'A paper boat\non a rainy street', size: '16:9' },
      headers: { 'x-request-id': requestId },
    });
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The job id is the gateway's request id; the client's own is echoed beside it.
    const jobId = stream.response.headers.get('x-request-id')!;
    expect(jobId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(stream.id).toBe(jobId);
    expect(stream.response.headers.get('x-client-request-id')).toBe(requestId);
    expect(stream.response.headers.get('x-ratelimit-limit-requests')).toBeTruthy();

    const first = await stream.next();
    expect(first).toEqual({ id: jobId, object: 'video.generation.progress', status: 'queued', progress: 0 });
    const final = await stream.final();
    const events = stream.events;

    const heartbeats = events.filter(isHeartbeat);
    expect(heartbeats.length).toBeGreaterThanOrEqual(2);
    for (const heartbeat of heartbeats) expect(heartbeat).toEqual({ heartbeat: true });
    const running = events.filter((event) => isProgress(event) && event.status === 'in_progress').map((event) => event.progress);
    expect(running.length).toBeGreaterThanOrEqual(5);
    expect([...running].sort((a, b) => a - b)).toEqual(running);
    expect(running[running.length - 1]).toBeGreaterThan(running[0]);
    // Exactly one final object, and it is the last line.
    expect(events.filter(isFinal)).toEqual([final]);
    expect(final).toEqual({
      id: jobId,
      object: 'video.generation',
      status: 'completed',
      model: 'sim-video-quick',
      size: '16:9',
      resolution: '160x90',
      duration: 1,
      content_type: 'video/x-msvideo',
      url: expect.stringMatching(/\/v1\/files\/videos\/[0-9a-f-]{36}\.avi\?expires=\d+&signature=[\w-]+$/),
    });

    const file = await download(final.url);
    expect(file.status).toBe(200);
    expect(file.contentType).toBe('video/x-msvideo');
    expect(file.body.readUInt32LE(4) + 8).toBe(file.body.length);
    expect(aviHeader(file.body)).toEqual({ riff: 'RIFF', form: 'AVI ', frames: 4, width: 160, height: 90, microsPerFrame: 250_000 });
    expect(file.body.includes(Buffer.from('movi'))).toBe(true);
    expect(file.body.includes(Buffer.from('idx1'))).toBe(true);
    // Private: without its signature the URL is refused.
    expect((await download(final.url.split('?')[0])).status).toBe(403);
  });

  it("uses the model's first size when none is sent, and draws the asked aspect ratio", async () => {
    const portrait = await VideoStream.open({ key: account.masterKey, body: { model: 'sim-video-quick', prompt: 'a lighthouse', size: '9:16' } });
    const byDefault = await VideoStream.open({ key: account.masterKey, body: { model: 'sim-video-quick', prompt: 'a lighthouse' } });
    const [tall, wide] = await Promise.all([portrait.final(), byDefault.final()]);
    expect(tall).toMatchObject({ status: 'completed', size: '9:16', resolution: '90x160' });
    expect(wide).toMatchObject({ status: 'completed', size: '16:9', resolution: '160x90' });
    expect(aviHeader((await download(tall.url)).body)).toMatchObject({ width: 90, height: 160 });
  });

  it('lists the built-in sim-video model with its sizes and per-video price', async () => {
    const models = await api('GET', '/v1/models', { key: account.masterKey });
    expect(models.body.data.find((model: any) => model.id === 'sim-video')).toMatchObject({
      endpoints: ['videos.generations'],
      sizes: ['16:9', '9:16', '1:1'],
      pricing: { input: 0, output: 0, per_item: 0.05 },
    });
  });

  it('answers 406 with a message without Accept: text/event-stream, on both routes', async () => {
    const body = { model: 'sim-video-quick', prompt: 'never made' };
    for (const accept of [undefined, 'application/json', '*/*', 'text/event-stream;q=0']) {
      const response = await api('POST', '/v1/videos/generations', { key: account.masterKey, body, headers: accept ? { accept } : {} });
      expect({ accept, status: response.status }).toEqual({ accept, status: 406 });
      expect(response.body.error.message).toContain('Accept: text/event-stream');
    }
    const attach = await api('GET', '/v1/videos/generations/req_whatever', { key: account.masterKey });
    expect(attach.status).toBe(406);
  });

  it.each([
    ['no body fields', 400, 'model', {}],
    ['model not a string', 400, 'model', { model: 7, prompt: 'x' }],
    ['a chat model', 400, 'model', { model: 'sim-chat', prompt: 'x' }],
    ['an unknown model', 404, 'model', { model: 'no-such-video-model', prompt: 'x' }],
    ['no prompt', 400, 'prompt', { model: 'sim-video-quick' }],
    ['an empty prompt', 400, 'prompt', { model: 'sim-video-quick', prompt: '' }],
    ['prompt not a string', 400, 'prompt', { model: 'sim-video-quick', prompt: ['a', 'b'] }],
    ['a prompt over 10,000 characters', 400, 'prompt', { model: 'sim-video-quick', prompt: 'x'.repeat(10_001) }],
    ['size not w:h', 400, 'size', { model: 'sim-video-quick', prompt: 'x', size: '1280x720' }],
    ['size zero', 400, 'size', { model: 'sim-video-quick', prompt: 'x', size: '0:9' }],
    ['size a number', 400, 'size', { model: 'sim-video-quick', prompt: 'x', size: 1.77 }],
    ['a size the model does not offer', 400, 'size', { model: 'sim-video-quick', prompt: 'x', size: '1:1' }],
  ])('%s → %i naming %s', async (_label, status, param, body) => {
    const response = await api('POST', '/v1/videos/generations', { key: account.masterKey, body, headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body.error).toMatchObject({ param });
    expect(response.body.error.message).toContain(param);
  });

  it("names the allowed sizes, and refuses a non-object body; any client request id is fine, the job id is the gateway's", async () => {
    const size = await api('POST', '/v1/videos/generations', {
      key: account.masterKey,
      body: { model: 'sim-video-quick', prompt: 'x', size: '1:1' },
      headers: { accept: 'text/event-stream' },
    });
    expect(size.body.error.message).toContain('16:9, 9:16');
    const array = await api('POST', '/v1/videos/generations', { key: account.masterKey, rawBody: '[1]', headers: { accept: 'text/event-stream' } });
    expect(array.status).toBe(400);
    // Ids BullMQ could not take as job ids (':' or all digits) do not matter: they are only echoed.
    await Promise.all(
      ['job:1', '12345'].map(async (requestId) => {
        const stream = await VideoStream.open({
          key: account.masterKey,
          body: { model: 'sim-video-quick', prompt: 'x' },
          headers: { 'x-request-id': requestId },
        });
        expect({ requestId, status: stream.response.status }).toEqual({ requestId, status: 200 });
        expect(stream.response.headers.get('x-client-request-id')).toBe(requestId);
        expect(stream.id).toBe(stream.response.headers.get('x-request-id'));
        expect(await stream.final()).toMatchObject({ id: stream.id, status: 'completed' });
      }),
    );
  });

  it('runs the openai adapter against an OpenAI-style video API: progress from upstream, the file stored and served', async () => {
    const prompt = `a fox in the snow ${newRequestId('openai-video')}`;
    const stream = await VideoStream.open({ key: account.masterKey, body: { model: 'fake-openai-video', prompt, size: '16:9' } });
    expect(stream.response.status).toBe(200);
    const final = await stream.final();
    const upstreamProgress = stream.events.filter((event) => isProgress(event) && event.status === 'in_progress').map((event) => event.progress);
    expect(upstreamProgress).toEqual(expect.arrayContaining([25, 50, 75]));
    expect(final).toMatchObject({
      status: 'completed',
      model: 'fake-openai-video',
      size: '16:9',
      resolution: '1280x720',
      duration: 8,
      content_type: 'video/mp4',
      url: expect.stringMatching(/\/v1\/files\/videos\/[0-9a-f-]{36}\.mp4\?/),
    });
    const file = await download(final.url);
    expect(file.status).toBe(200);
    expect(file.body.equals(FAKE_VIDEO_BYTES)).toBe(true);

    const created = (await fakeRequests('openai')).filter(
      (request) => request.method === 'POST' && request.path === '/v1/videos' && String(request.body).includes(prompt),
    );
    expect(created).toHaveLength(1);
    expect(created[0].headers.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    expect(String(created[0].headers['content-type'])).toMatch(/^multipart\/form-data/);
    const form = await new Response(String(created[0].body), { headers: { 'content-type': String(created[0].headers['content-type']) } }).formData();
    expect(Object.fromEntries(form.entries())).toEqual({ model: 'sora-fake', prompt, size: '1280x720', seconds: '8' });
  });

  it('ends with an error object when the upstream generation fails', async () => {
    const stream = await VideoStream.open({ key: account.masterKey, body: { model: 'fake-openai-video-fail', prompt: 'forbidden scene', size: '9:16' } });
    const final = await stream.final();
    expect(final).toEqual({
      id: stream.id,
      object: 'video.generation',
      status: 'failed',
      error: { message: expect.stringContaining(FAKE_VIDEO_FAILURE), type: 'video_generation_error', code: 'generation_failed' },
    });
    expect(stream.events.filter(isFinal)).toHaveLength(1);
  });
});
