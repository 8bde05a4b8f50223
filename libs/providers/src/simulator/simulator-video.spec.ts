import type { UpstreamRoute } from '../provider-adapter';
import { generateVideo, type VideoContext, VideoJobError, type VideoRequest } from '../video';
import { SimulatorAdapter } from './simulator.adapter';

const route = (options: Record<string, unknown>): UpstreamRoute => ({ adapter: 'simulator', upstreamModel: 'sim-video', options });

describe('the simulator generating videos', () => {
  const adapter = new SimulatorAdapter();
  const generate = (options: Record<string, unknown>, request: VideoRequest, context: Partial<VideoContext> = {}) =>
    generateVideo(adapter, route(options), request, {
      signal: new AbortController().signal,
      progress: async () => undefined,
      started: async () => undefined,
      ...context,
    });

  it('reports progress in tenths, then returns an AVI of clip_seconds × fps frames in the asked aspect ratio', async () => {
    const reported: number[] = [];
    const started: string[] = [];
    const video = await generate(
      { duration_ms: 300, clip_seconds: 2, fps: 5 },
      { jobId: 'req_1', prompt: 'a tall tower', size: '9:16' },
      { progress: async (percent) => void reported.push(percent), started: async (id) => void started.push(id) },
    );
    expect(started).toEqual([expect.stringMatching(/^sim-video-\d+$/)]);
    // Every tenth as the polls find it (a slow machine may skip one), in order.
    expect(reported.length).toBeGreaterThan(0);
    for (const [i, percent] of reported.entries()) {
      expect([10, 20, 30, 40, 50, 60, 70, 80, 90]).toContain(percent);
      if (i > 0) expect(percent).toBeGreaterThan(reported[i - 1]);
    }
    expect(video).toMatchObject({ contentType: 'video/x-msvideo', extension: 'avi', duration: 2, resolution: '90x160' });
    expect(video.body.toString('latin1', 0, 4)).toBe('RIFF');
    expect(video.body.readUInt32LE(48)).toBe(10); // total frames in the main header
  });

  it('draws the same clip for the same prompt, and another for another', async () => {
    const make = (prompt: string) => generate({ duration_ms: 0, clip_seconds: 1, fps: 2 }, { jobId: 'r', prompt, size: '1:1' });
    const [a, b, c] = await Promise.all([make('sunrise'), make('sunrise'), make('sunset')]);
    expect(a.body.equals(b.body)).toBe(true);
    expect(a.body.equals(c.body)).toBe(false);
  });

  it('stops when the worker shuts down', async () => {
    const shutdown = new AbortController();
    const running = generate({ duration_ms: 60_000 }, { jobId: 'r', prompt: 'p', size: '16:9' }, { signal: shutdown.signal });
    shutdown.abort(new Error('shutting down'));
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('refuses a bad route option for good (not retried)', async () => {
    const error = await generate({ duration_ms: 'soon' }, { jobId: 'r', prompt: 'p', size: '16:9' }).catch((error: unknown) => error);
    expect(error).toBeInstanceOf(VideoJobError);
    expect(error).toMatchObject({ code: 'invalid_model_config', retryable: false });
    expect((error as Error).message).toContain('duration_ms');
  });

  it('resumes a generation another worker started: no new one, done once its time is up', async () => {
    const started: string[] = [];
    const video = await generate(
      { duration_ms: 60_000, clip_seconds: 1, fps: 2 },
      { jobId: 'r', prompt: 'p', size: '16:9' },
      { resumeId: `sim-video-${Date.now() - 61_000}`, started: async (id) => void started.push(id) },
    );
    expect(started).toEqual([]);
    expect(video).toMatchObject({ duration: 1, resolution: '160x90' });
  });
});
