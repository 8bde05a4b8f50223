import type { SpeechCall } from '@gateway/canonical';
import { DomainError } from '@gateway/errors';
import { SIM_SPEECH_SAMPLE_RATE, simulatedSpeech, simulatedSpeechSamples } from './simulator-speech';

const call = (overrides: Partial<SpeechCall> = {}): SpeechCall => ({
  model: 'sim-tts',
  input: 'Hello, simulated world.',
  voice: 'alloy',
  format: 'wav',
  speed: 1,
  speedSet: false,
  ...overrides,
});

async function audioOf(request: SpeechCall): Promise<{ contentType: string; bytes: Buffer; chunks: number }> {
  const stream = simulatedSpeech(request, new AbortController().signal);
  const chunks: Buffer[] = [];
  for await (const event of stream.events) if (event.kind === 'audio') chunks.push(event.bytes);
  return { contentType: stream.contentType, bytes: Buffer.concat(chunks), chunks: chunks.length };
}

describe('simulated speech', () => {
  it('lasts 20 ms per character at speed 1, shorter when faster, at least a quarter second', () => {
    expect(simulatedSpeechSamples('x'.repeat(100), 1)).toBe(2 * SIM_SPEECH_SAMPLE_RATE);
    expect(simulatedSpeechSamples('x'.repeat(100), 2)).toBe(SIM_SPEECH_SAMPLE_RATE);
    expect(simulatedSpeechSamples('hi', 1)).toBe(SIM_SPEECH_SAMPLE_RATE / 4);
    // Characters are code points: an emoji is one.
    expect(simulatedSpeechSamples('😀'.repeat(50), 1)).toBe(SIM_SPEECH_SAMPLE_RATE);
  });

  it('writes a WAV whose header sizes match its data, in several chunks', async () => {
    const request = call({ input: 'x'.repeat(60) });
    const { contentType, bytes, chunks } = await audioOf(request);
    expect(contentType).toBe('audio/wav');
    expect(chunks).toBeGreaterThan(2);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(bytes.readUInt32LE(4)).toBe(bytes.length - 8);
    expect(bytes.readUInt32LE(24)).toBe(SIM_SPEECH_SAMPLE_RATE);
    expect(bytes.readUInt32LE(40)).toBe(simulatedSpeechSamples(request.input, 1) * 2);
    expect(bytes.length).toBe(44 + simulatedSpeechSamples(request.input, 1) * 2);
  });

  it('writes raw PCM, differing by voice', async () => {
    const alloy = await audioOf(call({ format: 'pcm' }));
    const custom = await audioOf(call({ format: 'pcm', voice: { id: 'voice_1' } }));
    expect(alloy.contentType).toBe('audio/pcm');
    expect(alloy.bytes.length).toBe(simulatedSpeechSamples('Hello, simulated world.', 1) * 2);
    expect(custom.bytes.length).toBe(alloy.bytes.length);
    expect(custom.bytes.equals(alloy.bytes)).toBe(false);
  });

  it('encodes MP3 frames (MPEG-2 layer III at 24 kHz)', async () => {
    const { contentType, bytes } = await audioOf(call({ format: 'mp3' }));
    expect(contentType).toBe('audio/mpeg');
    const header = bytes.readUInt32BE(0);
    expect(header >>> 21).toBe(0x7ff);
    expect((header >>> 19) & 3).toBe(2); // MPEG-2
    expect((header >>> 17) & 3).toBe(1); // layer III
    expect((header >>> 10) & 3).toBe(1); // 24000 Hz
  });

  it('refuses the formats it does not produce, naming response_format', () => {
    expect(() => simulatedSpeech(call({ format: 'opus' }), new AbortController().signal)).toThrow(
      expect.objectContaining({ param: 'response_format' }) as DomainError,
    );
  });

  it('stops when the signal aborts', async () => {
    const abort = new AbortController();
    const stream = simulatedSpeech(call({ format: 'pcm', input: 'x'.repeat(500) }), abort.signal);
    const events = stream.events[Symbol.asyncIterator]();
    await events.next();
    abort.abort(new Error('client gone'));
    await expect(events.next()).rejects.toThrow('client gone');
  });
});
