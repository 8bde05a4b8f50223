/**
 * `/metrics` on the edge (API port, outside `/v1`, no key) and on every service's health port:
 * Prometheus text with the gateway's metrics, whose values move with the requests served — and
 * whose labels never carry a key, an account id or text the client made up.
 */
import { api, createAccount, sleep, TestAccount } from '../support/api';
import { declares, samples, scrape, valueOf } from '../support/prometheus';
import { suiteInfo } from '../support/suite-info';

const chat = (key: string, model: string, extra: Record<string, unknown> = {}) =>
  api('POST', '/v1/chat/completions', { key, body: { model, messages: [{ role: 'user', content: 'Count to five' }], max_tokens: 20, ...extra } });

const serviceMetrics = (service: string) => scrape(`http://127.0.0.1:${suiteInfo().services[service].healthPort}/metrics`);

const CHAT_SERIES = { route: '/v1/chat/completions', model: 'sim-chat', status: '200', key_type: 'master', family: 'text' };

describe('metrics', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('the edge serves Prometheus text at /metrics, outside /v1 and without a key', async () => {
    const edge = await scrape(`${suiteInfo().edgeA}/metrics`);
    expect(edge.status).toBe(200);
    expect(edge.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(declares(edge.text, 'process_cpu_user_seconds_total', 'counter')).toBe(true);
    for (const [name, type] of [
      ['gateway_http_requests_total', 'counter'],
      ['gateway_http_request_duration_seconds', 'histogram'],
      ['gateway_inflight_requests', 'gauge'],
      ['gateway_stream_ttfb_seconds', 'histogram'],
      ['gateway_nats_request_duration_seconds', 'histogram'],
    ] as const) {
      expect({ name, declared: declares(edge.text, name, type) }).toEqual({ name, declared: true });
    }
    const prefixed = await api('GET', '/v1/metrics');
    expect(prefixed.status).toBe(404);
  });

  it('counts chat requests by route pattern, catalog model, status, key type and endpoint family; times streams and NATS hops', async () => {
    const before = (await scrape(`${suiteInfo().edgeA}/metrics`)).text;
    expect((await chat(account.masterKey, 'sim-chat')).status).toBe(200);
    const streamed = await chat(account.masterKey, 'sim-chat', { stream: true });
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('data: [DONE]');
    const after = (await scrape(`${suiteInfo().edgeA}/metrics`)).text;

    expect(valueOf(after, 'gateway_http_requests_total', CHAT_SERIES)).toBe(valueOf(before, 'gateway_http_requests_total', CHAT_SERIES) + 2);
    expect(valueOf(after, 'gateway_http_request_duration_seconds_count', CHAT_SERIES)).toBe(
      valueOf(before, 'gateway_http_request_duration_seconds_count', CHAT_SERIES) + 2,
    );
    const ttfb = { route: '/v1/chat/completions', model: 'sim-chat' };
    expect(valueOf(after, 'gateway_stream_ttfb_seconds_count', ttfb)).toBe(valueOf(before, 'gateway_stream_ttfb_seconds_count', ttfb) + 1);
    expect(valueOf(after, 'gateway_stream_ttfb_seconds_sum', ttfb)).toBeGreaterThan(valueOf(before, 'gateway_stream_ttfb_seconds_sum', ttfb));
    const inference = { subject: 'inference.text' };
    expect(valueOf(after, 'gateway_nats_request_duration_seconds_count', inference)).toBe(
      valueOf(before, 'gateway_nats_request_duration_seconds_count', inference) + 2,
    );
    // Both requests have finished: nothing of theirs is still in flight (the scrape itself is not counted).
    expect(valueOf(after, 'gateway_inflight_requests')).toBe(0);
  });

  it('labels a model the catalog does not know `unknown`, and never shows keys or account ids', async () => {
    const invented = 'my-private-prompt-text-as-a-model';
    const before = (await scrape(`${suiteInfo().edgeA}/metrics`)).text;
    const response = await chat(account.masterKey, invented);
    expect(response.status).toBe(404);
    const unauthenticated = await api('GET', '/v1/auth/proxy', { key: `${account.masterKey}x` });
    expect(unauthenticated.status).toBe(401);
    const after = (await scrape(`${suiteInfo().edgeA}/metrics`)).text;

    const unknown = { route: '/v1/chat/completions', model: 'unknown', status: '404', key_type: 'master' };
    expect(valueOf(after, 'gateway_http_requests_total', unknown)).toBe(valueOf(before, 'gateway_http_requests_total', unknown) + 1);
    const refused = { route: '/v1/auth/proxy', model: 'none', status: '401', key_type: 'none', family: 'none' };
    expect(valueOf(after, 'gateway_http_requests_total', refused)).toBe(valueOf(before, 'gateway_http_requests_total', refused) + 1);
    for (const secret of [invented, account.masterKey, account.masterKey.slice(-8), account.accountId]) {
      expect(after.includes(secret)).toBe(false);
    }
    const labelNames = new Set(samples(after, 'gateway_http_requests_total').flatMap((sample) => Object.keys(sample.labels)));
    expect([...labelNames].sort()).toEqual(['family', 'key_type', 'model', 'route', 'status']);
  });

  it('the router reports upstream latency and errors by provider and catalog model, and its in-flight calls', async () => {
    const before = (await serviceMetrics('inference-router')).text;
    expect((await chat(account.masterKey, 'sim-chat')).status).toBe(200);
    expect((await chat(account.masterKey, 'broken-chat')).status).toBe(502);
    const router = await serviceMetrics('inference-router');
    expect(router.status).toBe(200);
    const after = router.text;

    const simulator = { provider: 'simulator', model: 'sim-chat' };
    expect(valueOf(after, 'gateway_upstream_request_duration_seconds_count', simulator)).toBe(
      valueOf(before, 'gateway_upstream_request_duration_seconds_count', simulator) + 1,
    );
    // Every attempt counts: UPSTREAM_ATTEMPTS (2) on the one route of broken-chat.
    const broken = { provider: 'openai', model: 'broken-chat' };
    expect(valueOf(after, 'gateway_upstream_errors_total', broken)).toBe(valueOf(before, 'gateway_upstream_errors_total', broken) + 2);
    expect(valueOf(after, 'gateway_upstream_errors_total', simulator)).toBe(valueOf(before, 'gateway_upstream_errors_total', simulator));
    expect(declares(after, 'gateway_inflight_requests', 'gauge')).toBe(true);
    expect(valueOf(after, 'gateway_inflight_requests')).toBe(0);
    // By family: the suite's router serves them all (ROUTER_FAMILIES unset), and says so.
    expect(samples(after, 'gateway_inflight_requests').map((sample) => sample.labels.family)).toEqual([
      'text',
      'embeddings',
      'moderations',
      'images',
      'decisions',
      'audio',
    ]);
    expect(samples(after, 'gateway_router_families')).toEqual([{ labels: { families: 'text,embeddings,moderations,images,decisions,audio' }, value: 1 }]);
  });

  it('metering reports ledger writes and the consumer backlog', async () => {
    const before = (await serviceMetrics('metering-service')).text;
    const written = { result: 'written' };
    const start = valueOf(before, 'gateway_ledger_writes_total', written);
    expect((await chat(account.masterKey, 'sim-chat')).status).toBe(200);
    let after = before;
    // Metering is asynchronous: wait for the request's ledger write.
    for (let i = 0; i < 100 && valueOf(after, 'gateway_ledger_writes_total', written) <= start; i++) {
      await sleep(100);
      after = (await serviceMetrics('metering-service')).text;
    }
    // At least: a late event of an earlier file (a stream cut off, a crashed router's) may land too.
    expect(valueOf(after, 'gateway_ledger_writes_total', written)).toBeGreaterThanOrEqual(start + 1);
    expect(declares(after, 'gateway_metering_pending_events', 'gauge')).toBe(true);
    expect(samples(after, 'gateway_metering_pending_events')).toEqual([{ labels: {}, value: expect.any(Number) }]);
  });

  it('the video worker reports its queue depth by state', async () => {
    const video = await serviceMetrics('video-worker');
    expect(video.status).toBe(200);
    const states = samples(video.text, 'gateway_video_queue_depth').map((sample) => sample.labels.state);
    expect(states.sort()).toEqual(['active', 'delayed', 'failed', 'waiting']);
    expect(declares(video.text, 'gateway_video_job_duration_seconds', 'histogram')).toBe(true);
  });

  it('every back-end service serves /metrics on its health port', async () => {
    for (const service of ['key-service', 'account-service', 'metering-service', 'inference-router', 'video-worker']) {
      const response = await serviceMetrics(service);
      expect({ service, status: response.status }).toEqual({ service, status: 200 });
      expect(declares(response.text, 'nodejs_eventloop_lag_seconds', 'gauge')).toBe(true);
    }
  });
});
