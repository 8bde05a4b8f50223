import { encodeVideoEvent, failedEvent, HEARTBEAT, progressEvent } from './video-events';

/** Splits a stream the way the spec's clients read it: by line, skipping empty ones, each line JSON. */
const readLines = (wire: string) =>
  wire
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));

describe('video stream encoding', () => {
  it('writes each event as one JSON line followed by a blank line, without an SSE data: prefix', () => {
    expect(encodeVideoEvent(HEARTBEAT)).toBe('{"heartbeat":true}\n\n');
    const progress = encodeVideoEvent(progressEvent('req_1', { status: 'in_progress', progress: 40 }));
    expect(progress).toBe('{"id":"req_1","object":"video.generation.progress","status":"in_progress","progress":40}\n\n');
  });

  it('keeps a message with newlines on one line, so every non-empty line parses as one object', () => {
    const failure = failedEvent('req_2', { code: 'generation_failed', message: 'line one\nline two\r\n\n{"heartbeat":true}' });
    const wire = [HEARTBEAT, progressEvent('req_2', { status: 'queued', progress: 0 }), failure].map(encodeVideoEvent).join('');
    expect(readLines(wire)).toEqual([
      { heartbeat: true },
      { id: 'req_2', object: 'video.generation.progress', status: 'queued', progress: 0 },
      {
        id: 'req_2',
        object: 'video.generation',
        status: 'failed',
        error: { message: 'line one\nline two\r\n\n{"heartbeat":true}', type: 'video_generation_error', code: 'generation_failed' },
      },
    ]);
  });

  it('reports progress as a whole percentage from 0 to 100', () => {
    expect(progressEvent('r', { status: 'in_progress', progress: 33.3333 })).toMatchObject({ progress: 33 });
    expect(progressEvent('r', { status: 'in_progress', progress: 140 })).toMatchObject({ progress: 100 });
    expect(progressEvent('r', { status: 'in_progress', progress: -5 })).toMatchObject({ progress: 0 });
    expect(progressEvent('r', { status: 'in_progress', progress: Number.NaN })).toMatchObject({ progress: 0 });
  });
});
