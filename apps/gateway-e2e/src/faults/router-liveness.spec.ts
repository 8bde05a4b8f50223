/**
 * Router liveness, for every family. The edge tells a slow router from a dead one by asking the
 * NATS server whether the replica serving a request is still connected (see RouterWatch): a router
 * frozen longer than the silence timeout — CPU starvation at its extreme — keeps every stream and
 * request; one that dies is noticed within seconds on embeddings as on streams; and a request whose
 * client got an error status is never charged.
 */
import { once } from 'node:events';
import { api, createAccount, ledgerEntry, sleep, TestAccount } from '../support/api';
import { fakeRequestsMentioning, newRequestId, openaiClient, withRequestId } from '../support/clients';
import { isRunning, replaceService, startExtraEdge, waitForExit } from '../support/processes';
import { suiteInfo } from '../support/suite-info';
import { UsageWatcher } from '../support/usage-events';

/** The edge's default INFERENCE_SILENCE_TIMEOUT_MS: silence past it gets the router's connection probed. */
const SILENCE_MS = 6_000;

const routerPid = () => suiteInfo().services['inference-router'].pid;

describe('router liveness', () => {
  let account: TestAccount;
  let usage: UsageWatcher;

  beforeAll(async () => {
    account = createAccount('pro', '100');
    usage = await UsageWatcher.open();
  });

  afterAll(async () => {
    await usage?.close();
    const pid = routerPid();
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // not running
    }
    if (!isRunning(pid)) await replaceService('inference-router');
  });

  it('a router frozen longer than the silence timeout is slow, not dead: its streams and embeddings complete, each billed once as success', async () => {
    const openai = openaiClient(account.masterKey);
    const ids = [0, 1, 2].map((i) => newRequestId(`frozen-${i}`));
    let started = 0;
    let froze: () => void = () => undefined;
    const frozen = new Promise<void>((resolve) => (froze = resolve));
    const streams = ids.map(async (requestId) => {
      const stream = await openai.chat.completions.create(
        { model: 'sim-long', stream: true, messages: [{ role: 'user', content: 'Tell me a long story' }] },
        withRequestId(requestId),
      );
      let deltas = 0;
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content && ++deltas === 3 && ++started === ids.length) froze();
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      return { deltas, finish };
    });
    // An embeddings request in flight across the freeze too (its upstream answers after 6 s).
    const embedId = newRequestId('frozen-embed');
    const embedding = api('POST', '/v1/embeddings', {
      key: account.masterKey,
      headers: { 'x-request-id': embedId },
      body: { model: 'fake-slow-embed', input: 'frozen in time' },
    });
    await frozen;
    const pid = routerPid();
    process.kill(pid, 'SIGSTOP');
    try {
      // The stimulus, not a wait for a condition: frozen for well over the silence timeout.
      await sleep(SILENCE_MS + 3_000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const results = await Promise.all(streams);
    for (const result of results) expect(result).toEqual({ deltas: expect.any(Number), finish: 'stop' });
    expect((await embedding).status).toBe(200);
    for (const requestId of [...ids, embedId]) {
      const event = await usage.single(requestId);
      expect(event).toMatchObject({ status: 'success' });
      expect(await ledgerEntry(account.masterKey, event.requestId)).toMatchObject({ status: 'success' });
    }
  });

  it('an embeddings request in flight when its router dies gets 503 within seconds, and costs nothing', async () => {
    const requestId = newRequestId('embed-router-dies');
    const text = `nobody will answer this ${requestId}`;
    const startedAt = Date.now();
    const pending = api('POST', '/v1/embeddings', {
      key: account.masterKey,
      headers: { 'x-request-id': requestId },
      body: { model: 'fake-slow-embed', input: text },
    });
    // The router has it (it called the upstream), and dies with it.
    for (let i = 0; i < 100 && (await fakeRequestsMentioning('openai', text)).length === 0; i++) await sleep(50);
    expect(await fakeRequestsMentioning('openai', text)).toHaveLength(1);
    const pid = routerPid();
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    const response = await pending;
    const noticedAfterMs = Date.now() - killedAt;
    await waitForExit(pid);
    await replaceService('inference-router');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBeTruthy();
    expect(response.body.error).toMatchObject({ type: 'service_unavailable_error' });
    // Within the silence timeout of the router's last heartbeat (and far from the 660 s idle timeout).
    expect(noticedAfterMs).toBeLessThan(SILENCE_MS + 2_000);
    expect(Date.now() - startedAt).toBeLessThan(30_000);

    // Nothing recorded for it: a later request of the same account reaches the ledger, this one never.
    const later = newRequestId('embed-after');
    const answer = await api('POST', '/v1/embeddings', {
      key: account.masterKey,
      headers: { 'x-request-id': later },
      body: { model: 'fake-openai-embed', input: 'after the crash' },
    });
    expect(answer.status).toBe(200);
    await usage.single(later);
    expect(usage.eventsFor(requestId)).toEqual([]);
    // The edge voided it (it answered 503 and nothing else): logged as an error of 0 credits.
    const voids = usage.voidsFor(requestId);
    const gatewayId = voids[0]?.event.requestId;
    expect(voids.map(({ event, msgId }) => ({ status: event.status, route: event.route, msgId }))).toEqual([
      { status: 'error', route: 'embeddings', msgId: `${gatewayId}:void` },
    ]);
    expect(await ledgerEntry(account.masterKey, gatewayId)).toMatchObject({ status: 'error', credits: 0 });
  });

  it('an edge that gives up on an embeddings request before any answer (idle timeout) has it recorded as an error, never charged', async () => {
    const { edge, base } = await startExtraEdge({ INFERENCE_IDLE_TIMEOUT_MS: '2000' }, 'edge-short-idle');
    try {
      const requestId = newRequestId('embed-abandoned');
      const response = await api('POST', '/v1/embeddings', {
        key: account.masterKey,
        base,
        headers: { 'x-request-id': requestId },
        body: { model: 'fake-slow-embed', input: 'too slow for this edge' },
      });
      expect(response.status).toBe(503);
      // The router finishes the upstream call later; its client got 503, so it is an error: no charge.
      const event = await usage.single(requestId);
      expect(event).toMatchObject({ status: 'error', route: 'embeddings' });
      const entry = await ledgerEntry(account.masterKey, event.requestId);
      expect(entry).toMatchObject({ status: 'error' });
      expect(entry.credits).toBe(0);
    } finally {
      if (edge.exitCode === null) {
        const exited = once(edge, 'exit');
        edge.kill('SIGTERM');
        await exited;
      }
    }
  });

  it('a router restarted under load records every request it answers (it serves only once it can record)', async () => {
    const pid = routerPid();
    process.kill(pid, 'SIGKILL');
    await waitForExit(pid);
    const answered: string[] = [];
    let ready = false;
    const replaced = replaceService('inference-router').then(() => (ready = true));
    const worker = async (n: number) => {
      // Until the new router is ready, and three more requests each once it is.
      for (let i = 0, afterReady = 0; afterReady < 3; i++) {
        if (ready) afterReady++;
        const requestId = newRequestId(`restart-${n}-${i}`);
        const response = await api('POST', '/v1/embeddings', {
          key: account.masterKey,
          headers: { 'x-request-id': requestId },
          body: { model: 'fake-openai-embed', input: `during the restart ${i}` },
        });
        if (response.status === 200) answered.push(requestId);
        else {
          expect(response.status).toBe(503);
          await sleep(50);
        }
      }
    };
    await Promise.all([replaced, ...[0, 1, 2, 3].map(worker)]);
    expect(answered.length).toBeGreaterThan(0);
    for (const requestId of answered) expect(await usage.single(requestId)).toMatchObject({ status: 'success', route: 'embeddings' });
  });
});
