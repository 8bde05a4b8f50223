import { GracefulShutdown } from './graceful-shutdown';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GracefulShutdown', () => {
  it('runs the drain tasks first, then reports draining and waits for the work in progress', async () => {
    const shutdown = new GracefulShutdown();
    const endRequest = shutdown.beginWork();
    let stopIntake!: () => void;
    shutdown.onDrain('intake', () => new Promise<void>((resolve) => (stopIntake = resolve)));
    let drained: boolean | undefined;
    const drain = shutdown.drain(60_000).then((done) => (drained = done));
    await tick();
    expect(shutdown.draining).toBe(false);
    stopIntake();
    await tick();
    expect(shutdown.draining).toBe(true);
    expect(drained).toBeUndefined();
    endRequest();
    endRequest(); // a second call does not count twice
    await drain;
    expect(drained).toBe(true);
    expect(shutdown.inFlight).toBe(0);
  });

  it('gives up when the grace period ends, still draining', async () => {
    const shutdown = new GracefulShutdown();
    shutdown.beginWork();
    expect(await shutdown.drain(10)).toBe(false);
    expect(shutdown.draining).toBe(true);
    expect(shutdown.inFlight).toBe(1);
  });

  it('logs a failed drain task and goes on', async () => {
    const shutdown = new GracefulShutdown();
    const warnings: string[] = [];
    shutdown.onDrain('broken', () => Promise.reject(new Error('boom')));
    expect(await shutdown.drain(1000, { log: () => undefined, error: () => undefined, warn: (message: string) => warnings.push(message) })).toBe(true);
    expect(warnings).toEqual(['drain task broken failed: boom']);
  });
});
