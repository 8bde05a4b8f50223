import type { UpstreamRoute } from '../provider-adapter';
import { VideoJobError } from '../video';
import { SimulatorAdapter } from './simulator.adapter';

const route = (options: Record<string, unknown>): UpstreamRoute => ({ adapter: 'simulator', upstreamModel: 'sim-video', options });

describe('the simulator generating videos', () => {
  const adapter = new SimulatorAdapter();

  it('reports progress in tenths, then returns an AVI of clip_seconds × fps frames in the asked aspect ratio', async () => {
    const reported: number[] = [];
    const video = await adapter.generateVideo(
      route({ duration_ms: 0, clip_seconds: 2, fps: 5 }),
      { jobId: 'req_1', prompt: 'a tall tower', size: '9:16' },
      { signal: new AbortController().signal, progress: async (percent) => void reported.push(percent), started: async () => undefined },
    );
    expect(reported).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90]);
    expect(video).toMatchObject({ contentType: 'video/x-msvideo', extension: 'avi', duration: 2, resolution: '90x160' });
    expect(video.body.toString('latin1', 0, 4)).toBe('RIFF');
    expect(video.body.readUInt32LE(48)).toBe(10); // total frames in the main header
  });

  it('draws the same clip for the same prompt, and another for another', async () => {
    const make = (prompt: string) =>
      adapter.generateVideo(
        route({ duration_ms: 0, clip_seconds: 1, fps: 2 }),
        { jobId: 'r', prompt, size: '1:1' },
        { signal: new AbortController().signal, progress: async () => undefined, started: async () => undefined },
      );
    const [a, b, c] = await Promise.all([make('sunrise'), make('sunrise'), make('sunset')]);
    expect(a.body.equals(b.body)).toBe(true);
    expect(a.body.equals(c.body)).toBe(false);
  });

  it('stops when the worker shuts down', async () => {
    const shutdown = new AbortController();
    const running = adapter.generateVideo(
      route({ duration_ms: 60_000 }),
      { jobId: 'r', prompt: 'p', size: '16:9' },
      { signal: shutdown.signal, progress: async () => undefined, started: async () => undefined },
    );
    shutdown.abort(new Error('shutting down'));
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('refuses a bad route option for good (not retried)', async () => {
    const failure = adapter
      .generateVideo(
        route({ duration_ms: 'soon' }),
        { jobId: 'r', prompt: 'p', size: '16:9' },
        { signal: new AbortController().signal, progress: async () => undefined, started: async () => undefined },
      )
      .catch((error: unknown) => error);
    const error = await failure;
    expect(error).toBeInstanceOf(VideoJobError);
    expect(error).toMatchObject({ code: 'invalid_model_config', retryable: false });
    expect((error as Error).message).toContain('duration_ms');
  });
});
