import type { TranscriptionRequest, TranscriptionResult } from '@gateway/canonical';
import { probeAudio } from '@gateway/platform';
import { malformedResponse } from '../upstream-http';

/** Seconds to milliseconds' precision, as the simulator reports them. */
const roundMs = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/** `hh:mm:ss,mmm` (SRT) or `hh:mm:ss.mmm` (WebVTT). */
function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

async function* eventsOf(events: Record<string, unknown>[]): AsyncGenerator<Record<string, unknown>> {
  yield* events;
}

/**
 * The simulator's transcription: it reads the file's true duration from its header itself (as an
 * upstream would hear it), and answers one segment of text naming the file and its seconds, in
 * every format OpenAI's API has, with `usage: {type: "duration", seconds}` where the format has
 * usage. A file it cannot read is a 400, as an upstream refuses a corrupt file.
 */
export async function simulatedTranscription(request: TranscriptionRequest): Promise<TranscriptionResult> {
  const stream = await request.file.open();
  let probe;
  try {
    probe = await probeAudio(stream, { mimeType: request.file.contentType, path: request.file.filename });
  } finally {
    stream.destroy();
  }
  if (!probe) throw malformedResponse('no duration for the file (the simulator could not read it)');
  const seconds = roundMs(probe.durationSeconds);
  const verb = request.task === 'translate' ? 'Translated into English' : 'Transcribed';
  const text = `${verb} by the simulator: ${request.file.filename}, ${seconds} seconds of audio.`;
  const usage = { type: 'duration' as const, seconds };
  if (request.stream) {
    const deltas = text.split(/(?<= )/).map((delta) => ({ type: 'transcript.text.delta', delta }));
    return { body: { kind: 'events', events: eventsOf([...deltas, { type: 'transcript.text.done', text, usage: { type: 'duration', seconds } }]) } };
  }
  switch (request.responseFormat) {
    case 'text':
      return { body: { kind: 'text', text: `${text}\n` } };
    case 'srt':
      return { body: { kind: 'text', text: `1\n${timestamp(0, ',')} --> ${timestamp(seconds, ',')}\n${text}\n\n` } };
    case 'vtt':
      return { body: { kind: 'text', text: `WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(seconds, '.')}\n${text}\n\n` } };
    case 'verbose_json': {
      const segment = {
        id: 0,
        seek: 0,
        start: 0,
        end: seconds,
        text,
        tokens: [],
        temperature: request.temperature ?? 0,
        avg_logprob: 0,
        compression_ratio: 1,
        no_speech_prob: 0,
      };
      const words = text
        .split(' ')
        .map((word, index, all) => ({ word, start: roundMs((seconds * index) / all.length), end: roundMs((seconds * (index + 1)) / all.length) }));
      const value: Record<string, unknown> = {
        task: request.task === 'translate' ? 'translate' : 'transcribe',
        language: request.task === 'translate' ? 'english' : (request.language ?? 'english'),
        duration: seconds,
        text,
        segments: [segment],
        usage: { type: 'duration', seconds },
      };
      if (request.timestampGranularities?.includes('word')) value.words = words;
      return { body: { kind: 'json', value }, usage };
    }
    default:
      return { body: { kind: 'json', value: { text, usage: { type: 'duration', seconds } } }, usage };
  }
}
