import { readFileSync } from 'node:fs';
import type { SpeechCall, SpeechEvent, SpeechStream } from '@gateway/canonical';
import { DomainError, ErrorCode } from '@gateway/errors';

/** OpenAI's `pcm`: 24 kHz, mono, signed 16-bit little-endian samples; `wav` and `mp3` hold the same. */
export const SIM_SPEECH_SAMPLE_RATE = 24_000;
/** Speech at speed 1: this long per input character (so the audio's length follows the input). */
export const SIM_SPEECH_MS_PER_CHARACTER = 20;
/** The shortest clip, whatever the input. */
const MIN_SECONDS = 0.25;
/** Samples per chunk handed on (a quarter of a second). */
const CHUNK_SAMPLES = SIM_SPEECH_SAMPLE_RATE / 4;
const MP3_KBPS = 48;

/** The formats the simulator really produces. */
export const SIM_SPEECH_FORMATS = ['mp3', 'wav', 'pcm'] as const;
const CONTENT_TYPES: Record<(typeof SIM_SPEECH_FORMATS)[number], string> = { mp3: 'audio/mpeg', wav: 'audio/wav', pcm: 'audio/pcm' };

/** Samples of the clip for `input` at `speed`. */
export function simulatedSpeechSamples(input: string, speed: number): number {
  const characters = [...input].length;
  const seconds = Math.max(MIN_SECONDS, (characters * SIM_SPEECH_MS_PER_CHARACTER) / 1000 / speed);
  return Math.round(seconds * SIM_SPEECH_SAMPLE_RATE);
}

function hash(text: string): number {
  let value = 2166136261;
  for (let i = 0; i < text.length; i++) value = Math.imul(value ^ text.charCodeAt(i), 16777619) >>> 0;
  return value;
}

/**
 * The clip's samples, chunk by chunk: one short tone per character, its pitch from the voice and
 * the character, with a soft edge at each change so it does not click.
 */
function* pcmChunks(call: SpeechCall): Generator<Int16Array> {
  const total = simulatedSpeechSamples(call.input, call.speed);
  const characters = [...call.input];
  const base = 140 + (hash(typeof call.voice === 'string' ? call.voice : `id:${call.voice.id}`) % 160);
  const perCharacter = Math.max(1, Math.floor(total / Math.max(1, characters.length)));
  // Each character's phase step (0: a pause, for white space), worked out once.
  const steps = characters.map((character) =>
    /\s/.test(character) ? 0 : (2 * Math.PI * base * (1 + ((character.codePointAt(0) ?? 0) % 12) / 12)) / SIM_SPEECH_SAMPLE_RATE,
  );
  let phase = 0;
  for (let start = 0; start < total; start += CHUNK_SAMPLES) {
    const chunk = new Int16Array(Math.min(CHUNK_SAMPLES, total - start));
    for (let i = 0; i < chunk.length; i++) {
      const n = start + i;
      const index = Math.max(0, Math.min(characters.length - 1, Math.floor(n / perCharacter)));
      const step = steps[index] ?? 0;
      phase += step;
      const within = n - index * perCharacter;
      const edge = Math.min(1, within / 120, (perCharacter - within) / 120);
      chunk[i] = step === 0 ? 0 : Math.round(Math.sin(phase) * 9000 * Math.max(0, edge));
    }
    yield chunk;
  }
}

const bytesOf = (samples: Int16Array): Buffer => {
  const bytes = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i], i * 2);
  return bytes;
};

/** The 44-byte header of a PCM WAV file holding `samples` mono 16-bit samples: sizes exact, since the length is known first. */
export function wavHeader(samples: number, sampleRate = SIM_SPEECH_SAMPLE_RATE): Buffer {
  const dataBytes = samples * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

interface Mp3Encoder {
  encodeBuffer(samples: Int16Array): Uint8Array;
  flush(): Uint8Array;
}
type Mp3EncoderClass = new (channels: number, sampleRate: number, kbps: number) => Mp3Encoder;
let mp3Encoder: Mp3EncoderClass | undefined;

/**
 * `@breezystack/lamejs` (a maintained pure-JS LAME). Its CommonJS entry is a script that only
 * declares a global `lamejs`; it is evaluated here so that its classes are returned, no global set.
 */
function loadMp3Encoder(): Mp3EncoderClass {
  if (!mp3Encoder) {
    const source = readFileSync(require.resolve('@breezystack/lamejs'), 'utf8');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the package's own script, read from node_modules
    const lamejs = new Function(`${source}\nreturn lamejs;`)() as { Mp3Encoder: Mp3EncoderClass };
    mp3Encoder = lamejs.Mp3Encoder;
  }
  return mp3Encoder;
}

async function* audioEvents(call: SpeechCall, signal: AbortSignal): AsyncGenerator<SpeechEvent> {
  const throwIfAborted = () => {
    if (signal.aborted) throw signal.reason;
  };
  if (call.format === 'wav') yield { kind: 'audio', bytes: wavHeader(simulatedSpeechSamples(call.input, call.speed)) };
  const encoder = call.format === 'mp3' ? new (loadMp3Encoder())(1, SIM_SPEECH_SAMPLE_RATE, MP3_KBPS) : undefined;
  for (const chunk of pcmChunks(call)) {
    throwIfAborted();
    const bytes = encoder ? Buffer.from(encoder.encodeBuffer(chunk)) : bytesOf(chunk);
    if (bytes.length > 0) yield { kind: 'audio', bytes };
    // Yield to the event loop between chunks: the audio streams while it is made.
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (encoder) {
    const last = Buffer.from(encoder.flush());
    if (last.length > 0) yield { kind: 'audio', bytes: last };
  }
}

/** The simulator's speech: a real WAV, PCM or MP3 clip whose length follows the input (no usage tokens: billed by characters). */
export function simulatedSpeech(call: SpeechCall, signal: AbortSignal): SpeechStream {
  const format = call.format as (typeof SIM_SPEECH_FORMATS)[number];
  if (!SIM_SPEECH_FORMATS.includes(format)) {
    throw new DomainError(ErrorCode.InvalidRequest, `response_format must be one of ${SIM_SPEECH_FORMATS.join(', ')} for ${call.model}`, 'response_format');
  }
  return { contentType: CONTENT_TYPES[format], events: audioEvents(call, signal) };
}
