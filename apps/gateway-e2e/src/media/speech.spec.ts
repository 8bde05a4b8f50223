/**
 * `POST /v1/audio/speech` through the official `openai` client: the simulator's real WAV, PCM and
 * MP3 (the WAV's header and sizes checked, the MP3 decoded with mpg123), `stream_format: sse` events,
 * billing by characters (exact, in the ledger) or by the upstream's tokens, a proxy key's whitelist,
 * validation at the boundary, and the fake OpenAI upstream receiving the fields sent.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { api, createAccount, createProxyKey, ledgerEntry, TestAccount } from '../support/api';
import { fakeRequestsMentioning, marker, openaiClient } from '../support/clients';
import { FAKE_AUDIO_PREFIX, FAKE_SPEECH_GAP_MS, FAKE_SPEECH_OUTPUT_TOKENS, FAKE_SPEECH_REJECT_MESSAGE } from '../support/fake-openai-speech';
import { suiteInfo } from '../support/suite-info';

const SAMPLE_RATE = 24_000;
/** config/models.yaml: sim-tts speaks 20 ms per character at speed 1, at least 0.25 s, and costs 15 credits per million characters. */
const MS_PER_CHARACTER = 20;
const SIM_TTS_PER_MILLION_CHARACTERS = 15;

const expectedSamples = (text: string, speed = 1) => Math.round(Math.max(0.25, ([...text].length * MS_PER_CHARACTER) / 1000 / speed) * SAMPLE_RATE);

/** The fields of a RIFF/WAVE file's header, read as a decoder would. */
function readWav(bytes: Buffer) {
  expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
  expect(bytes.subarray(8, 12).toString('latin1')).toBe('WAVE');
  expect(bytes.subarray(12, 16).toString('latin1')).toBe('fmt ');
  expect(bytes.subarray(36, 40).toString('latin1')).toBe('data');
  return {
    riffSize: bytes.readUInt32LE(4),
    format: bytes.readUInt16LE(20),
    channels: bytes.readUInt16LE(22),
    sampleRate: bytes.readUInt32LE(24),
    byteRate: bytes.readUInt32LE(28),
    bitsPerSample: bytes.readUInt16LE(34),
    dataSize: bytes.readUInt32LE(40),
    samples: bytes.subarray(44),
  };
}

/** Decodes an MP3 with mpg123 (`mpg123-decoder`, WebAssembly; an ES module, so in a child Node process). */
const DECODE_MP3 = `
import { MPEGDecoder } from 'mpg123-decoder';
import { readFileSync } from 'node:fs';
const decoder = new MPEGDecoder();
await decoder.ready;
const { channelData, samplesDecoded, sampleRate, errors } = decoder.decode(new Uint8Array(readFileSync(0)));
decoder.free();
let peak = 0;
for (const sample of channelData[0] ?? []) peak = Math.max(peak, Math.abs(sample));
process.stdout.write(JSON.stringify({ samplesDecoded, sampleRate, errors: errors.length, peak }));
`;

function decodeMp3(bytes: Buffer): { samplesDecoded: number; sampleRate: number; errors: number; peak: number } {
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', DECODE_MP3], { input: bytes, cwd: join(__dirname, '../../../..') });
  return JSON.parse(output.toString());
}

/** The `data:` events of an SSE body. */
const sseEvents = (text: string): any[] =>
  text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice('data: '.length)));

/** The ledger's exact charge of a request, as PostgreSQL holds it. */
async function ledgerCredits(requestId: string): Promise<string | undefined> {
  const client = new Client({ connectionString: suiteInfo().env.DATABASE_URL });
  await client.connect();
  try {
    const result = await client.query('SELECT credits::text AS credits FROM usage_logs WHERE request_id = $1', [requestId]);
    return result.rows[0]?.credits;
  } finally {
    await client.end();
  }
}

/** `value` as PostgreSQL's numeric(24, 12) prints it. */
const numeric = (value: string) => {
  const [whole, fraction = ''] = value.split('.');
  return `${whole}.${fraction.padEnd(12, '0')}`;
};

describe('POST /v1/audio/speech', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  const speech = (params: Parameters<ReturnType<typeof openaiClient>['audio']['speech']['create']>[0], key = account.masterKey) =>
    openaiClient(key).audio.speech.create(params);
  /** The gateway's id of the request a response answers (what the ledger keys it by). */
  const idOf = (response: { headers: Headers }) => response.headers.get('x-request-id')!;

  it('answers a real WAV whose length follows the input and the speed, billed per character in the ledger, exactly', async () => {
    const input = 'Hello from the gateway, this is a speech test.';
    const response = await speech({ model: 'sim-tts', input, voice: 'alloy', response_format: 'wav' });
    const requestId = idOf(response);
    expect(response.headers.get('content-type')).toBe('audio/wav');
    const bytes = Buffer.from(await response.arrayBuffer());
    const wav = readWav(bytes);
    expect(wav).toMatchObject({ format: 1, channels: 1, sampleRate: SAMPLE_RATE, byteRate: SAMPLE_RATE * 2, bitsPerSample: 16 });
    expect(wav.riffSize).toBe(bytes.length - 8);
    expect(wav.dataSize).toBe(bytes.length - 44);
    expect(wav.dataSize).toBe(expectedSamples(input) * 2);
    // Not silence: a tone.
    let peak = 0;
    for (let i = 0; i < wav.samples.length; i += 2) peak = Math.max(peak, Math.abs(wav.samples.readInt16LE(i)));
    expect(peak).toBeGreaterThan(1000);

    const fast = Buffer.from(await (await speech({ model: 'sim-tts', input, voice: 'alloy', response_format: 'wav', speed: 2 })).arrayBuffer());
    expect(readWav(fast).dataSize).toBe(expectedSamples(input, 2) * 2);

    const entry = await ledgerEntry(account.masterKey, requestId);
    expect(entry).toMatchObject({ route: 'audio.speech', model: 'sim-tts', status: 'success' });
    expect(entry.input_tokens).toBeUndefined();
    const exact = ((input.length * SIM_TTS_PER_MILLION_CHARACTERS) / 1_000_000).toFixed(12);
    expect(await ledgerCredits(requestId)).toBe(numeric(exact));
  });

  it('answers raw PCM and a decodable MP3 (the default format) of the same length', async () => {
    const input = 'A somewhat longer sentence, so that the clip lasts a few seconds in every format.';
    const pcm = Buffer.from(await (await speech({ model: 'sim-tts', input, voice: 'nova', response_format: 'pcm' })).arrayBuffer());
    expect(pcm.length).toBe(expectedSamples(input) * 2);

    const response = await speech({ model: 'sim-tts', input, voice: 'nova' });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    const mp3 = decodeMp3(Buffer.from(await response.arrayBuffer()));
    expect(mp3).toMatchObject({ sampleRate: SAMPLE_RATE, errors: 0 });
    expect(mp3.peak).toBeGreaterThan(0.03);
    // The encoder adds its delay and pads the last frame: a few frames (576 samples each) more at most.
    expect(mp3.samplesDecoded).toBeGreaterThanOrEqual(expectedSamples(input));
    expect(mp3.samplesDecoded).toBeLessThan(expectedSamples(input) + 0.2 * SAMPLE_RATE);
  });

  it('streams speech.audio.delta events and a speech.audio.done with the usage (stream_format: sse)', async () => {
    const input = 'Streamed as events.';
    const response = await speech({ model: 'sim-tts', input, voice: 'verse', response_format: 'pcm', stream_format: 'sse' });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseEvents(await response.text());
    const deltas = events.filter((event) => event.type === 'speech.audio.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.at(-1)).toEqual({ type: 'speech.audio.done', usage: { input_characters: input.length } });
    expect(events.length).toBe(deltas.length + 1);
    const audio = Buffer.concat(deltas.map((event) => Buffer.from(event.audio, 'base64')));
    expect(audio.length).toBe(expectedSamples(input) * 2);
  });

  it('counts audio.speech in /user/me', async () => {
    const owner = createAccount('pro', '10');
    await (await speech({ model: 'sim-tts', input: 'one', voice: 'alloy', response_format: 'pcm' }, owner.masterKey)).arrayBuffer();
    const last = await speech({ model: 'sim-tts', input: 'two', voice: 'alloy', response_format: 'pcm' }, owner.masterKey);
    await last.arrayBuffer();
    await ledgerEntry(owner.masterKey, idOf(last));
    const me = await api('GET', '/v1/user/me', { key: owner.masterKey });
    expect(me.status).toBe(200);
    expect(me.body.endpoints['audio.speech']).toBe(2);
  });

  it('refuses a proxy key without the model in its whitelist: 403, nothing charged', async () => {
    const owner = createAccount('pro', '10');
    const limited = await createProxyKey(owner.masterKey, { model_whitelist: ['sim-chat'] });
    const refused = await api('POST', '/v1/audio/speech', { key: limited.key, body: { model: 'sim-tts', input: 'not for you', voice: 'alloy' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ param: 'model' });
    const allowed = await createProxyKey(owner.masterKey, { model_whitelist: ['sim-tts'] });
    const ok = await api('POST', '/v1/audio/speech', {
      key: allowed.key,
      body: { model: 'sim-tts', input: 'for you', voice: 'alloy', response_format: 'pcm' },
    });
    expect(ok.status).toBe(200);
    await ledgerEntry(owner.masterKey, idOf(ok));
    const logs = await api('GET', '/v1/user/logs', { key: owner.masterKey });
    expect(logs.body).toHaveLength(1);
    const me = await api('GET', '/v1/user/me', { key: owner.masterKey });
    expect(me.body.credits).toBeCloseTo(10 - (7 * SIM_TTS_PER_MILLION_CHARACTERS) / 1_000_000, 12);
  });

  it.each([
    ['input missing', { voice: 'alloy' }, 'input', /input/],
    ['input of 4097 characters', { input: 'x'.repeat(4097), voice: 'alloy' }, 'input', /4096/],
    ['a voice the model does not list', { input: 'hi', voice: 'robot' }, 'voice', /alloy/],
    ['a voice object without a string id', { input: 'hi', voice: { id: 7 } }, 'voice', /id/],
    ['a format sim-tts does not produce', { input: 'hi', voice: 'alloy', response_format: 'opus' }, 'response_format', /mp3, wav, pcm/],
    ['an unknown format', { input: 'hi', voice: 'alloy', response_format: 'ogg' }, 'response_format', /one of/],
    ['speed 5', { input: 'hi', voice: 'alloy', speed: 5 }, 'speed', /at most 4/],
    ['a speed that is no number', { input: 'hi', voice: 'alloy', speed: 'fast' }, 'speed', /number/],
    ['an unknown stream_format', { input: 'hi', voice: 'alloy', stream_format: 'chunks' }, 'stream_format', /audio, sse/],
  ])('is a 400 naming the field for %s', async (_label, fields, param, message) => {
    const response = await api('POST', '/v1/audio/speech', { key: account.masterKey, body: { model: 'sim-tts', ...fields } });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ param, message: expect.stringMatching(message) });
  });

  it('is a 400 for a model that serves other endpoints and a 404 for an unknown one', async () => {
    const other = await api('POST', '/v1/audio/speech', { key: account.masterKey, body: { model: 'sim-chat', input: 'hi', voice: 'alloy' } });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({ param: 'model', message: expect.stringContaining('chat.completions') });
    const unknown = await api('POST', '/v1/audio/speech', { key: account.masterKey, body: { model: 'no-such-tts', input: 'hi', voice: 'alloy' } });
    expect(unknown.status).toBe(404);
  });

  describe('an OpenAI upstream', () => {
    it('receives the fields sent and streams the audio back as it comes, billed per character', async () => {
      const mk = marker('tts');
      const input = `Say this calmly ${mk}`;
      const response = await speech({ model: 'fake-openai-tts', input, voice: 'nova', instructions: 'calm and slow', speed: 1.5, response_format: 'flac' });
      const requestId = idOf(response);
      // The upstream's first half reaches the client while the upstream still holds the second.
      const reader = response.body!.getReader();
      const chunks: Buffer[] = [];
      let next = await reader.read();
      const firstAt = Date.now();
      chunks.push(Buffer.from(next.value!));
      expect(Buffer.concat(chunks).length).toBeLessThan(`${FAKE_AUDIO_PREFIX}${input}`.length);
      for (next = await reader.read(); !next.done; next = await reader.read()) chunks.push(Buffer.from(next.value));
      expect(Date.now() - firstAt).toBeGreaterThanOrEqual(FAKE_SPEECH_GAP_MS / 2);
      expect(Buffer.concat(chunks).toString()).toBe(`${FAKE_AUDIO_PREFIX}${input}`);
      const [sent] = await fakeRequestsMentioning('openai', mk);
      expect(sent.path).toBe('/v1/audio/speech');
      expect(sent.body).toEqual({ model: 'speaker', input, voice: 'nova', instructions: 'calm and slow', speed: 1.5, response_format: 'flac' });
      await ledgerEntry(account.masterKey, requestId);
      expect(await ledgerCredits(requestId)).toBe(numeric(((input.length * 15) / 1_000_000).toFixed(12)));
    });

    it('with stream_format sse, passes a custom voice on and bills the tokens the upstream reports', async () => {
      const mk = marker('tts');
      const input = `four words here ${mk}`;
      const response = await speech({
        model: 'fake-openai-tts',
        input,
        voice: { id: 'voice_custom_1' } as never,
        response_format: 'mp3',
        stream_format: 'sse',
      });
      const requestId = idOf(response);
      const events = sseEvents(await response.text());
      const audio = Buffer.concat(events.filter((event) => event.type === 'speech.audio.delta').map((event) => Buffer.from(event.audio, 'base64')));
      expect(audio.toString()).toBe(`${FAKE_AUDIO_PREFIX}${input}`);
      const usage = { input_characters: input.length, input_tokens: 4, output_tokens: FAKE_SPEECH_OUTPUT_TOKENS, total_tokens: 4 + FAKE_SPEECH_OUTPUT_TOKENS };
      expect(events.at(-1)).toEqual({ type: 'speech.audio.done', usage });
      const [sent] = await fakeRequestsMentioning('openai', mk);
      expect(sent.body).toEqual({ model: 'speaker', input, voice: { id: 'voice_custom_1' }, response_format: 'mp3', stream_format: 'sse' });
      const entry = await ledgerEntry(account.masterKey, requestId);
      expect(entry).toMatchObject({ route: 'audio.speech', model: 'fake-openai-tts', status: 'success' });
      // 4 input tokens at 2 and 120 output tokens at 10 per million (media-test-models.ts).
      expect(await ledgerCredits(requestId)).toBe(numeric(((4 * 2 + FAKE_SPEECH_OUTPUT_TOKENS * 10) / 1_000_000).toFixed(12)));
    });

    it('maps upstream errors like other routes, charging nothing', async () => {
      const rejected = await api('POST', '/v1/audio/speech', { key: account.masterKey, body: { model: 'reject-400-tts', input: 'hi', voice: 'alloy' } });
      expect(rejected.status).toBe(400);
      expect(rejected.body.error.message).toBe(FAKE_SPEECH_REJECT_MESSAGE);
      const broken = await api('POST', '/v1/audio/speech', { key: account.masterKey, body: { model: 'broken-tts', input: 'hi', voice: 'alloy' } });
      expect(broken.status).toBe(502);
      expect(broken.body.error.message).toMatch(/upstream/i);
      expect(await ledgerEntry(account.masterKey, idOf(rejected))).toMatchObject({ status: 'error', credits: 0 });
    });
  });
});
