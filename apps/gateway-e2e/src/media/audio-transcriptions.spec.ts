/**
 * `POST /v1/audio/transcriptions` and `/v1/audio/translations` through the official `openai` client,
 * with WAV files made here: the simulator reads the file's true duration, the fake OpenAI upstream
 * receives the multipart body re-streamed, and every request is billed under its route at the exact
 * decimal, whatever format it asked for; oversized uploads are refused while they are read.
 */
import { createHash } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { Client } from 'pg';
import { api, createAccount, createProxyKey, TestAccount } from '../support/api';
import { fakeRequests, marker, openaiClient } from '../support/clients';
import { FAKE_AUDIO_REJECTION, FAKE_AUDIO_SECONDS, FAKE_AUDIO_TOKENS, type MultipartSummary } from '../support/fake-openai-audio';
import { FAKE_AUDIO_PER_SECOND } from '../support/media-test-models';
import { suiteInfo } from '../support/suite-info';

const SAMPLE_RATE = 16_000;
/** `sim-transcribe`'s catalog price per second. */
const SIM_PER_SECOND = 0.0001;

/** A mono 16-bit PCM WAV of `seconds` of a 440 Hz tone (`padTo`: a data chunk that long, for an oversized file). */
function wav(seconds: number, padTo?: number): Buffer {
  const samples = Math.round(seconds * SAMPLE_RATE);
  const dataBytes = padTo !== undefined ? padTo - 44 : samples * 2;
  const file = Buffer.alloc(44 + dataBytes);
  file.write('RIFF', 0);
  file.writeUInt32LE(36 + dataBytes, 4);
  file.write('WAVEfmt ', 8);
  file.writeUInt32LE(16, 16);
  file.writeUInt16LE(1, 20); // PCM
  file.writeUInt16LE(1, 22); // mono
  file.writeUInt32LE(SAMPLE_RATE, 24);
  file.writeUInt32LE(SAMPLE_RATE * 2, 28);
  file.writeUInt16LE(2, 32);
  file.writeUInt16LE(16, 34);
  file.write('data', 36);
  file.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < Math.min(samples, dataBytes / 2); i++) file.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE)), 44 + i * 2);
  return file;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** The upstream requests whose file is named `filename`. */
async function upstreamReceived(filename: string): Promise<{ path: string; body: MultipartSummary }[]> {
  return (await fakeRequests('openai'))
    .filter((request) => (request.body as MultipartSummary | undefined)?.files?.file?.filename === filename)
    .map((request) => ({ path: request.path, body: request.body as MultipartSummary }));
}

describe('POST /v1/audio/transcriptions and /v1/audio/translations', () => {
  let account: TestAccount;
  let openai: OpenAI;
  let db: Client;

  /** The ledger's row of a request (metering writes it asynchronously), credits as the exact decimal it holds. */
  async function ledgerRow(requestId: string): Promise<{ route: string; model: string; status: string; credits: string; input_tokens: number | null }> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { rows } = await db.query('SELECT route, model, status, credits::text AS credits, input_tokens FROM usage_logs WHERE request_id = $1', [requestId]);
      if (rows.length === 1) return rows[0];
      if (Date.now() > deadline) throw new Error(`${requestId} never reached the ledger`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Credits, to the ledger's 12 decimals, as PostgreSQL prints them. */
  const decimal = (value: string): string => {
    const [whole, fraction = ''] = value.split('.');
    return `${whole}.${fraction.padEnd(12, '0')}`;
  };

  beforeAll(async () => {
    account = createAccount('pro', '100');
    openai = openaiClient(account.masterKey);
    db = new Client({ connectionString: suiteInfo().env.DATABASE_URL });
    await db.connect();
  });
  afterAll(() => db.end());

  describe('the simulator (sim-transcribe) reads the true duration', () => {
    const audio = wav(2.5);

    it('json: the text and the usage, billed 2.5 s at per_second', async () => {
      const name = `${marker('json')}.wav`;
      const { data, response } = await openai.audio.transcriptions.create({ file: await toFile(audio, name), model: 'sim-transcribe' }).withResponse();
      expect(data.text).toContain(name);
      expect(data.text).toContain('2.5 seconds');
      expect((data as unknown as { usage: unknown }).usage).toEqual({ type: 'duration', seconds: 2.5 });
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ route: 'audio.transcriptions', model: 'sim-transcribe', status: 'success', credits: decimal('0.00025') });
    });

    it('verbose_json carries the duration, language and segments; word timestamps when asked', async () => {
      const result = await openai.audio.transcriptions.create({
        file: await toFile(audio, `${marker('verbose')}.wav`),
        model: 'sim-transcribe',
        response_format: 'verbose_json',
        language: 'en',
        timestamp_granularities: ['word', 'segment'],
      });
      expect(result.duration).toBe(2.5);
      expect(result.language).toBe('en');
      expect(result.segments?.[0]).toMatchObject({ start: 0, end: 2.5 });
      expect(result.words?.length).toBeGreaterThan(3);
    });

    it.each(['text', 'srt', 'vtt'] as const)('%s answers plain text and is billed all the same', async (format) => {
      const { data, response } = await openai.audio.transcriptions
        .create({ file: await toFile(audio, `${marker(format)}.wav`), model: 'sim-transcribe', response_format: format })
        .withResponse();
      expect(typeof data).toBe('string');
      expect(data as unknown as string).toContain('2.5 seconds');
      if (format === 'srt') expect(data as unknown as string).toContain('00:00:00,000 --> 00:00:02,500');
      if (format === 'vtt') expect(data as unknown as string).toMatch(/^WEBVTT\n\n00:00:00.000 --> 00:00:02.500/);
      expect(response.headers.get('content-type')).toMatch(/^text\//);
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ route: 'audio.transcriptions', status: 'success', credits: decimal('0.00025') });
    });

    it('stream: transcript.text.delta events, then transcript.text.done with the usage billed', async () => {
      const name = `${marker('stream')}.wav`;
      const { data: stream, response } = await openai.audio.transcriptions
        .create({ file: await toFile(audio, name), model: 'sim-transcribe', stream: true })
        .withResponse();
      const events: any[] = [];
      for await (const event of stream) events.push(event);
      const done = events.at(-1);
      expect(done).toMatchObject({ type: 'transcript.text.done', usage: { type: 'duration', seconds: 2.5 } });
      expect(events.slice(0, -1).every((event) => event.type === 'transcript.text.delta')).toBe(true);
      expect(
        events
          .slice(0, -1)
          .map((event) => event.delta)
          .join(''),
      ).toBe(done.text);
      expect(done.text).toContain(name);
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ route: 'audio.transcriptions', credits: decimal('0.00025') });
    });

    it('translations: billed under audio.translations', async () => {
      const { data, response } = await openai.audio.translations
        .create({ file: await toFile(wav(1.25), `${marker('tr')}.wav`), model: 'sim-transcribe' })
        .withResponse();
      expect(data.text).toMatch(/^Translated into English by the simulator: .*1\.25 seconds/);
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ route: 'audio.translations', model: 'sim-transcribe', credits: decimal('0.000125') });
    });
  });

  describe('a fake OpenAI upstream', () => {
    it('receives the fields and the file bytes the client sent, re-streamed as multipart; its usage seconds win', async () => {
      const audio = wav(2);
      const name = `${marker('fields')}.wav`;
      const { data, response } = await openai.audio.transcriptions
        .create({
          file: await toFile(audio, name, { type: 'audio/wav' }),
          model: 'fake-whisper',
          language: 'de',
          prompt: 'Hallo, Welt.',
          response_format: 'verbose_json',
          temperature: 0.2,
          timestamp_granularities: ['segment', 'word'],
        })
        .withResponse();
      expect(data.text).toBe(`Fake transcript of ${name} (${audio.length} bytes)`);
      const [received] = await upstreamReceived(name);
      expect(received.path).toBe('/v1/audio/transcriptions');
      expect(received.body.files.file).toEqual({ filename: name, contentType: 'audio/wav', size: audio.length, sha256: sha256(audio) });
      expect(received.body.fields).toEqual({
        model: 'whisper-echo',
        language: 'de',
        prompt: 'Hallo, Welt.',
        response_format: 'verbose_json',
        temperature: '0.2',
        'timestamp_granularities[]': ['segment', 'word'],
      });
      // The upstream reported 7 s for a 2 s file: its usage is what is billed.
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ route: 'audio.transcriptions', model: 'fake-whisper', credits: decimal(String(FAKE_AUDIO_SECONDS * FAKE_AUDIO_PER_SECOND)) });
    });

    it('translations go to /audio/translations', async () => {
      const name = `${marker('tr')}.wav`;
      const result = await openai.audio.translations.create({ file: await toFile(wav(1), name), model: 'fake-whisper' });
      expect(result.text).toContain('Fake translation');
      expect((await upstreamReceived(name))[0].path).toBe('/v1/audio/translations');
    });

    it('upstream tokens are billed at the token prices', async () => {
      const { response } = await openai.audio.transcriptions
        .create({ file: await toFile(wav(1), `${marker('tok')}.wav`), model: 'fake-gpt-transcribe' })
        .withResponse();
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      // 1000 input tokens at 2.5 and 200 output tokens at 10 per million.
      expect(row).toMatchObject({ model: 'fake-gpt-transcribe', credits: decimal('0.0045'), input_tokens: FAKE_AUDIO_TOKENS.input_tokens });
    });

    it('a stream from the upstream: its events relayed, the tokens of its done event billed', async () => {
      const name = `${marker('upstream-stream')}.wav`;
      const { data: stream, response } = await openai.audio.transcriptions
        .create({ file: await toFile(wav(1), name), model: 'fake-gpt-transcribe', stream: true })
        .withResponse();
      const events: any[] = [];
      for await (const event of stream) events.push(event);
      expect(events.at(-1)).toMatchObject({ type: 'transcript.text.done', text: expect.stringContaining(name), usage: { type: 'tokens' } });
      expect((await upstreamReceived(name))[0].body.fields.stream).toBe('true');
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ model: 'fake-gpt-transcribe', credits: decimal('0.0045') });
    });

    it('a stream is relayed as it comes: the first event reaches the client while the upstream still holds the rest', async () => {
      const name = `${marker('held')}.wav`;
      const { data: stream, response } = await openai.audio.transcriptions
        .create({ file: await toFile(wav(1), name), model: 'fake-gpt-transcribe-held', stream: true })
        .withResponse();
      const events = stream[Symbol.asyncIterator]();
      // The upstream sends the rest only once released: a gateway that waited for the whole answer would never deliver this one.
      const first = await events.next();
      expect(first.value).toMatchObject({ type: 'transcript.text.delta', delta: 'Fake ' });
      const release = await fetch(`${suiteInfo().fakeOpenAI}/__audio-release/${encodeURIComponent(name)}`, { method: 'POST' });
      expect(release.status).toBe(200);
      const rest: any[] = [];
      for (let next = await events.next(); !next.done; next = await events.next()) rest.push(next.value);
      expect(rest.at(-1)).toMatchObject({ type: 'transcript.text.done', text: expect.stringContaining(name), usage: { type: 'tokens' } });
      expect(['Fake ', ...rest.slice(0, -1).map((event) => event.delta)].join('')).toBe(rest.at(-1).text);
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ model: 'fake-gpt-transcribe-held', status: 'success', credits: decimal('0.0045') });
    });

    it.each(['json', 'text'] as const)('an answer without usage (%s) is billed at the duration read from the file', async (format) => {
      const { data, response } = await openai.audio.transcriptions
        .create({ file: await toFile(wav(2.5), `${marker('silent')}.wav`), model: 'fake-whisper-silent', response_format: format })
        .withResponse();
      if (format === 'json') expect((data as unknown as { usage: unknown }).usage).toEqual({ type: 'duration', seconds: 2.5 });
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ model: 'fake-whisper-silent', credits: decimal('0.015') });
    });

    it('maps upstream errors like other routes, charging nothing', async () => {
      const rejected = await openai.audio.transcriptions.create({ file: await toFile(wav(1), 'a.wav'), model: 'reject-400-whisper' }).catch((error) => error);
      expect(rejected).toBeInstanceOf(OpenAI.BadRequestError);
      expect(rejected.message).toContain(FAKE_AUDIO_REJECTION);
      const broken = await openai.audio.transcriptions.create({ file: await toFile(wav(1), 'b.wav'), model: 'broken-whisper' }).catch((error) => error);
      expect(broken.status).toBe(502);
      expect(broken.error).toMatchObject({ type: 'server_error', code: 'upstream_error' });
      const row = await ledgerRow(broken.headers.get('x-request-id'));
      expect(row).toMatchObject({ route: 'audio.transcriptions', status: 'error', credits: decimal('0') });
    });

    it('an upload over the 25 MiB limit is a 413 and never reaches the upstream', async () => {
      const name = `${marker('big')}.wav`;
      const started = Date.now();
      const refused = await openai.audio.transcriptions
        .create({ file: await toFile(wav(1, 30 * 1024 * 1024), name), model: 'fake-whisper' })
        .catch((error) => error);
      expect(refused.status).toBe(413);
      expect(refused.error).toMatchObject({ code: 'request_too_large' });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await upstreamReceived(name)).toEqual([]);
    });
  });

  it('a proxy key without the model in its whitelist gets 403 and is charged nothing', async () => {
    const proxy = await createProxyKey(account.masterKey, { model_whitelist: ['sim-chat'] });
    const name = `${marker('proxy')}.wav`;
    const refused = await openaiClient(proxy.key)
      .audio.transcriptions.create({ file: await toFile(wav(1), name), model: 'fake-whisper' })
      .catch((error) => error);
    expect(refused.status).toBe(403);
    expect(refused.param).toBe('model');
    expect(await upstreamReceived(name)).toEqual([]);
    const { rows } = await db.query('SELECT count(*)::int AS count FROM usage_logs WHERE masked_key LIKE $1 AND credits <> 0', [`%${proxy.key.slice(-4)}`]);
    expect(rows[0].count).toBe(0);
  });

  describe('bad input is a 400 naming the field', () => {
    async function post(form: FormData): Promise<{ status: number; body: any }> {
      const response = await fetch(`${suiteInfo().edgeA}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.masterKey}` },
        body: form,
      });
      return { status: response.status, body: await response.json() };
    }
    const form = (fields: Record<string, string | Blob>): FormData => {
      const data = new FormData();
      for (const [name, value] of Object.entries(fields)) {
        if (typeof value === 'string') data.append(name, value);
        else data.append(name, value, 'clip.wav');
      }
      return data;
    };

    it.each([
      ['no file', { model: 'sim-transcribe' }, 'file'],
      ['a file that is no audio', { file: new Blob(['just some text, not audio at all']), model: 'sim-transcribe' }, 'file'],
      ['an unknown response_format', { file: new Blob([wav(1)]), model: 'sim-transcribe', response_format: 'xml' }, 'response_format'],
      ['a temperature that is no number', { file: new Blob([wav(1)]), model: 'sim-transcribe', temperature: 'hot' }, 'temperature'],
      ['no model', { file: new Blob([wav(1)]) }, 'model'],
      ['a model that does not transcribe', { file: new Blob([wav(1)]), model: 'sim-chat' }, 'model'],
    ] as const)('%s', async (_case, fields, param) => {
      const response = await post(form(fields as Record<string, string | Blob>));
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
    });

    it('a JSON body', async () => {
      const response = await api('POST', '/v1/audio/transcriptions', { key: account.masterKey, body: { model: 'sim-transcribe' } });
      expect(response.status).toBe(400);
      expect(response.body.error.param).toBe('file');
    });
  });
});
