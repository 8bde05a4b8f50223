/**
 * A video job outlives its HTTP connection and its worker: a client may leave and re-attach
 * (GET /v1/videos/generations/{id}) through any edge replica, and a worker killed mid-job is
 * replaced by another that finishes it — with one usage event all the same.
 */
import { Queues } from '@gateway/contracts';
import { Job, Queue } from 'bullmq';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount, sleep, TestAccount } from '../support/api';
import { fakeRequests, newRequestId } from '../support/clients';
import { freePort, startExtraEdge, untilReady, waitForExit } from '../support/processes';
import { SUITE_INFO_FILE, suiteInfo } from '../support/suite-info';
import { UsageWatcher } from '../support/usage-events';
import { isFinal, isHeartbeat, isProgress, VideoStream } from '../support/video-stream';

const SLOW = { model: 'sim-video-slow', size: '16:9' };
const runningAt = (event: any) => isProgress(event) && event.status === 'in_progress';

/**
 * Starts a video-worker in place of the one the suite started (on its health port, or on `healthPort`),
 * and waits until it is ready. It serves the tests that follow; the global teardown stops it.
 */
async function replaceVideoWorker(env: Record<string, string> = {}, healthPort = suiteInfo().services['video-worker'].healthPort): Promise<number> {
  const info = suiteInfo();
  const log = openSync(join(info.logDir, 'video-worker-replacement.log'), 'a');
  const replacement = spawn(process.execPath, [join(info.root, 'dist/apps/video-worker/src/main.js')], {
    env: { ...info.env, ...env, HEALTH_PORT: String(healthPort) },
    stdio: ['ignore', log, log],
  });
  info.services['video-worker'] = { ...info.services['video-worker'], pid: replacement.pid as number, healthPort };
  writeFileSync(SUITE_INFO_FILE, JSON.stringify(info));
  await untilReady(`http://127.0.0.1:${healthPort}/readyz`, replacement);
  return replacement.pid as number;
}

/** The video job as BullMQ holds it. */
async function queuedJob(jobId: string): Promise<Job | undefined> {
  const queue = new Queue(Queues.video, { connection: { url: suiteInfo().env.REDIS_URL } });
  try {
    return await queue.getJob(jobId);
  } finally {
    await queue.close();
  }
}

describe('video jobs outlive connections and workers', () => {
  let account: TestAccount;
  let usage: UsageWatcher;

  beforeAll(async () => {
    account = createAccount('pro', '100');
    usage = await UsageWatcher.open();
  });

  afterAll(async () => {
    await usage?.close();
  });

  it('a worker killed mid-job: a restarted worker finishes it, the connected client gets the result, one usage event', async () => {
    const stream = await VideoStream.open({ key: account.masterKey, body: { ...SLOW, prompt: 'the worker dies halfway' } });
    const jobId = stream.id;
    await stream.until((event) => runningAt(event) && event.progress >= 20, 'the job running');
    process.kill(suiteInfo().services['video-worker'].pid, 'SIGKILL');
    const killedAt = stream.events.length;
    await replaceVideoWorker();

    const final = await stream.final();
    expect(final).toMatchObject({ id: jobId, status: 'completed', model: 'sim-video-slow' });
    const afterKill = stream.events.slice(killedAt);
    // The stream stayed alive while no worker ran the job; the job went back to the queue and ran
    // again (the simulator's job resumes where the provider had got to, as a real provider's does).
    expect(afterKill.some(isHeartbeat)).toBe(true);
    const requeued = afterKill.findIndex((event) => isProgress(event) && event.status === 'queued');
    expect(requeued).toBeGreaterThanOrEqual(0);
    expect(afterKill.slice(requeued).some((event) => runningAt(event) && event.progress === 0)).toBe(true);
    expect((await fetch(final.url)).status).toBe(200);

    const event = await usage.single(jobId);
    expect(event).toMatchObject({ requestId: jobId, route: 'videos.generations', status: 'success', units: 1, inputTokens: 0, outputTokens: 0 });
  });

  it('a worker sent SIGTERM mid-job takes no new job but finishes the running one within its grace period, then exits', async () => {
    const worker = suiteInfo().services['video-worker'].pid;
    const stream = await VideoStream.open({ key: account.masterKey, body: { ...SLOW, prompt: 'the worker is asked to stop' } });
    await stream.until((event) => runningAt(event) && event.progress >= 10, 'the job running');
    process.kill(worker, 'SIGTERM');
    const stoppedAt = stream.events.length;
    const final = await stream.final();
    expect(final).toMatchObject({ id: stream.id, status: 'completed' });
    // Finished where it ran: never back in the queue.
    expect(stream.events.slice(stoppedAt).some((event) => isProgress(event) && event.status === 'queued')).toBe(false);
    await waitForExit(worker);
    expect((await queuedJob(stream.id))?.stalledCounter).toBe(0);
    expect((await usage.single(stream.id)).status).toBe('success');
    await replaceVideoWorker();
  });

  it('a worker whose grace period runs out hands the job back: another worker resumes it at once, not as a stalled job, charged once', async () => {
    // Only a worker with a short grace period runs jobs...
    const original = suiteInfo().services['video-worker'];
    process.kill(original.pid, 'SIGTERM');
    await waitForExit(original.pid);
    const hurried = await replaceVideoWorker({ SHUTDOWN_GRACE_MS: '300' });
    const stream = await VideoStream.open({ key: account.masterKey, body: { ...SLOW, prompt: 'the worker has no time left' } });
    await stream.until((event) => runningAt(event) && event.progress >= 10, 'the job running');
    // ...then a second one joins, and the first is stopped mid-job.
    await replaceVideoWorker({}, await freePort());
    process.kill(hurried, 'SIGTERM');
    const stoppedAt = stream.events.length;
    const final = await stream.final();
    expect(final).toMatchObject({ id: stream.id, status: 'completed' });
    // Run again from the start by the successor.
    expect(stream.events.slice(stoppedAt).some((event) => runningAt(event) && event.progress === 0)).toBe(true);
    await waitForExit(hurried);
    const job = await queuedJob(stream.id);
    // Handed back, not lost: the job never counted as stalled.
    expect(job?.stalledCounter).toBe(0);
    expect((await usage.single(stream.id)).status).toBe('success');
  });

  it('an upstream error mid-job: the job is retried and resumes the same upstream generation, charged once', async () => {
    const prompt = `a flaky provider ${newRequestId('flaky')}`;
    const stream = await VideoStream.open({ key: account.masterKey, body: { model: 'fake-openai-video-flaky', prompt } });
    const final = await stream.final();
    expect(final).toMatchObject({ status: 'completed', model: 'fake-openai-video-flaky', content_type: 'video/mp4' });
    // The failed attempt sent the job back to the queue (with backoff) before it completed.
    const requeued = stream.events.findIndex((event, index) => index > 0 && isProgress(event) && event.status === 'queued');
    expect(requeued).toBeGreaterThan(0);
    // One upstream generation: the retry polled the one the first attempt started.
    const upstream = (await fakeRequests('openai')).filter((request) => request.method === 'POST' && String(request.body).includes(prompt));
    expect(upstream).toHaveLength(1);
    expect((await usage.single(stream.id)).status).toBe('success');
  });

  it('created through edge A, followed through edge B: both streams end with the same result', async () => {
    const { edgeA, edgeB } = suiteInfo();
    const onA = await VideoStream.open({ key: account.masterKey, base: edgeA, body: { model: 'sim-video-quick', prompt: 'two replicas' } });
    const first = await onA.next();
    const onB = await VideoStream.open({ key: account.masterKey, base: edgeB, jobId: first.id });
    expect(onB.response.status).toBe(200);
    expect(onB.id).toBe(first.id);
    const [finalA, finalB] = await Promise.all([onA.final(), onB.final()]);
    expect(finalA).toMatchObject({ id: first.id, status: 'completed' });
    expect(finalB).toEqual({ ...finalA, url: expect.any(String) });
    // Each edge signs its own URL for the same stored file.
    const path = (url: string) => new URL(url).pathname;
    expect(path(finalB.url)).toBe(path(finalA.url));
    expect(new URL(finalB.url).port).toBe(new URL(edgeB).port);
    expect((await fetch(finalB.url)).status).toBe(200);
  });

  it('a client that disconnects does not cancel the job: attaching again yields the result; a finished job answers at once', async () => {
    const leaving = await VideoStream.open({ key: account.masterKey, body: { ...SLOW, prompt: 'nobody watches' } });
    const requestId = leaving.id;
    await leaving.until(runningAt, 'the job running');
    leaving.abort();

    const back = await VideoStream.open({ key: account.masterKey, jobId: requestId });
    expect(back.response.status).toBe(200);
    const current = await back.next();
    expect(current).toMatchObject({ id: requestId, object: 'video.generation.progress', status: 'in_progress' });
    const final = await back.final();
    expect(final).toMatchObject({ id: requestId, status: 'completed' });

    const again = await VideoStream.open({ key: account.masterKey, jobId: requestId, base: suiteInfo().edgeB });
    const events: any[] = [];
    for (let event = await again.next(); event !== null; event = await again.next()) events.push(event);
    expect(events).toEqual([{ ...final, url: expect.any(String) }]);
    expect((await usage.single(requestId)).status).toBe('success');
  });

  it('an edge that stops keeps its streams for its grace period, then ends them without a final object and exits; the job is followed through another edge', async () => {
    // A grace period far shorter than the 9 s job: the stream is still open when it ends.
    const { edge, base } = await startExtraEdge({ SHUTDOWN_GRACE_MS: '1000' }, 'edge-stopping');
    const stream = await VideoStream.open({ key: account.masterKey, base, body: { ...SLOW, prompt: 'the edge goes away' } });
    await stream.next();
    const exited = once(edge, 'exit');
    edge.kill('SIGTERM');
    await stream.final();
    expect(stream.events.some(isFinal)).toBe(false);
    await exited;

    const final = await (await VideoStream.open({ key: account.masterKey, jobId: stream.id })).final();
    expect(final).toMatchObject({ id: stream.id, status: 'completed' });
  });

  it('only the account that created a job can attach (404 otherwise); unknown ids are 404; a reused client id starts a job of its own', async () => {
    const clientId = newRequestId('video-owned');
    const owner = await VideoStream.open({ key: account.masterKey, body: { model: 'sim-video-quick', prompt: 'mine' }, headers: { 'x-request-id': clientId } });
    const requestId = owner.id;
    await owner.next();
    const stranger = createAccount('pro', '10');
    const foreign = await VideoStream.open({ key: stranger.masterKey, jobId: requestId });
    expect(foreign.response.status).toBe(404);
    const unknown = await VideoStream.open({ key: account.masterKey, jobId: newRequestId('never-created') });
    expect(unknown.response.status).toBe(404);
    expect(((await unknown.response.json()) as any).error.param).toBe('id');

    // The client's id is only echoed: the same one again is another job, and both are metered.
    const reused = await VideoStream.open({
      key: account.masterKey,
      body: { model: 'sim-video-quick', prompt: 'again' },
      headers: { 'x-request-id': clientId },
    });
    expect(reused.response.status).toBe(200);
    expect(reused.id).not.toBe(requestId);
    expect(reused.response.headers.get('x-client-request-id')).toBe(clientId);
    expect(await owner.final()).toMatchObject({ status: 'completed', id: requestId });
    expect(isFinal(owner.events[owner.events.length - 1])).toBe(true);
    expect(await reused.final()).toMatchObject({ status: 'completed', id: reused.id });
    const events = await usage.waitFor(clientId, { settleMs: 1000 });
    expect(events.map((recorded) => recorded.event.requestId).sort()).toEqual([requestId, reused.id].sort());
  });
});
