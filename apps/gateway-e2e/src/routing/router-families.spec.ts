/**
 * Endpoint families on routers of their own (`ROUTER_FAMILIES`), on a NATS server of this test's
 * own so that the suite's all-family router is not there: with only an embeddings router running, a
 * request of another family answers 503 with `Retry-After` at once (the NATS server's "no
 * responders"), not after a timeout, and costs nothing, while embeddings are served and metered and
 * the model list works. The metrics tell the families apart. A text router joining serves chat.
 */
import { api, createAccount, ledgerEntry, TestAccount } from '../support/api';
import { AppProcess, RestartableServer, startApp, stopApps } from '../support/private-infra';
import { scrape, valueOf } from '../support/prometheus';

const SERVICES = ['key-service', 'account-service', 'metering-service'];
const CHAT = { model: 'sim-chat', max_tokens: 8, messages: [{ role: 'user', content: 'Is anybody there?' }] };
const EMBED = { model: 'sim-embed', dimensions: 8, input: 'families scale on their own' };
/** The acceptance's bound: a family nobody serves is refused within it (the text timeout is minutes). */
const REFUSED_WITHIN_MS = 2_000;

describe('router families (ROUTER_FAMILIES)', () => {
  let nats: RestartableServer;
  const apps: AppProcess[] = [];
  let router: AppProcess;
  let edge: AppProcess;
  let account: TestAccount;

  beforeAll(async () => {
    nats = await RestartableServer.nats();
    const env = { NATS_URL: nats.url };
    for (const app of SERVICES) apps.push(await startApp(app, env, `families-${app}`));
    router = await startApp('inference-router', { ...env, ROUTER_FAMILIES: 'embeddings' }, 'families-router-embeddings');
    apps.push(router);
    edge = await startApp('edge-gateway', env, 'families-edge');
    apps.push(edge);
    account = createAccount('pro', '100');
  }, 180_000);

  afterAll(async () => {
    await stopApps(apps);
    await nats?.stop();
  });

  /** A request to the private edge, with how long its answer took. */
  const timed = async (method: string, path: string, body?: unknown) => {
    const startedAt = Date.now();
    const response = await api(method, path, { key: account.masterKey, base: edge.base, body });
    return { ...response, elapsedMs: Date.now() - startedAt };
  };

  const expectUnavailable = (response: Awaited<ReturnType<typeof timed>>) => {
    expect({ status: response.status, retryAfter: Number(response.headers.get('retry-after')) }).toEqual({ status: 503, retryAfter: expect.any(Number) });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(response.elapsedMs).toBeLessThan(REFUSED_WITHIN_MS);
  };

  it('a chat request (plain and streamed) with no text router answers 503 with Retry-After within 2 s, in the spec error shape', async () => {
    for (const body of [CHAT, { ...CHAT, stream: true }]) {
      const response = await timed('POST', '/v1/chat/completions', body);
      expectUnavailable(response);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body.error).toMatchObject({ type: 'service_unavailable_error', code: 'service_unavailable' });
      expect(typeof response.body.error.message).toBe('string');
    }
    // The Messages API and its token count (a text router's work too), in Anthropic's shape.
    const messages = await timed('POST', '/v1/messages', CHAT);
    expectUnavailable(messages);
    expect(messages.body).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
    expectUnavailable(await timed('POST', '/v1/messages/count_tokens', { model: 'sim-chat', messages: CHAT.messages }));
  });

  it('other families nobody serves are refused the same way: moderations, images, decisions', async () => {
    expectUnavailable(await timed('POST', '/v1/moderations', { model: 'sim-moderation', input: 'hello' }));
    expectUnavailable(await timed('POST', '/v1/images/generations', { model: 'sim-image', prompt: 'a lighthouse' }));
    expectUnavailable(
      await timed('POST', '/v1/decisions', { state: { basket: ['banana'] }, questions: { fresh: { type: 'noul', instructions: 'Is it fresh?' } } }),
    );
  });

  it('embeddings are served and metered, the model list works, and the refused chat cost nothing', async () => {
    const refused = await timed('POST', '/v1/chat/completions', CHAT);
    expect(refused.status).toBe(503);
    const embedded = await timed('POST', '/v1/embeddings', EMBED);
    expect(embedded.status).toBe(200);
    expect(embedded.body.data).toHaveLength(1);
    expect(embedded.body.data[0].embedding).toHaveLength(8);
    const entry = await ledgerEntry(account.masterKey, embedded.headers.get('x-request-id')!, { base: edge.base });
    expect(entry).toMatchObject({ status: 'success', model: 'sim-embed' });
    expect(Number(entry.credits)).toBeGreaterThan(0);
    // Metered after the refused chat, and the refused chat is not in the ledger.
    const chatLogs = await api('GET', `/v1/user/logs?request_id=${refused.headers.get('x-request-id')}`, { key: account.masterKey, base: edge.base });
    expect(chatLogs.status).toBe(200);
    expect(chatLogs.body).toEqual([]);

    const models = await timed('GET', '/v1/models');
    expect(models.status).toBe(200);
    expect(models.body.data.map((model: { id: string }) => model.id)).toEqual(expect.arrayContaining(['sim-chat', 'sim-embed']));
  });

  it("the edge's request metrics and the router's carry the family", async () => {
    const before = (await scrape(`${edge.base}/metrics`)).text;
    expect((await timed('POST', '/v1/embeddings', EMBED)).status).toBe(200);
    expect((await timed('POST', '/v1/chat/completions', CHAT)).status).toBe(503);
    const after = (await scrape(`${edge.base}/metrics`)).text;
    const embeddings = { route: '/v1/embeddings', family: 'embeddings', status: '200' };
    const chat = { route: '/v1/chat/completions', family: 'text', status: '503' };
    expect(valueOf(after, 'gateway_http_requests_total', embeddings)).toBe(valueOf(before, 'gateway_http_requests_total', embeddings) + 1);
    expect(valueOf(after, 'gateway_http_requests_total', chat)).toBe(valueOf(before, 'gateway_http_requests_total', chat) + 1);
    const keys = { route: '/v1/user/logs', family: 'none' };
    expect(valueOf(after, 'gateway_http_requests_total', keys)).toBeGreaterThan(0);

    const routerMetrics = (await scrape(`http://127.0.0.1:${router.port}/metrics`)).text;
    expect(valueOf(routerMetrics, 'gateway_router_families', { families: 'embeddings' })).toBe(1);
    expect(valueOf(routerMetrics, 'gateway_inflight_requests', { family: 'embeddings' })).toBe(0);
    expect(routerMetrics).not.toContain('family="text"');
  });

  it('a text router joining serves chat, embeddings still served by theirs', async () => {
    apps.push(await startApp('inference-router', { NATS_URL: nats.url, ROUTER_FAMILIES: 'text' }, 'families-router-text'));
    const chat = await timed('POST', '/v1/chat/completions', CHAT);
    expect(chat.status).toBe(200);
    expect(chat.body.choices[0].message.content).toEqual(expect.any(String));
    expect((await timed('POST', '/v1/embeddings', EMBED)).status).toBe(200);
    // Still nobody for moderations.
    expect((await timed('POST', '/v1/moderations', { model: 'sim-moderation', input: 'hello' })).status).toBe(503);
  }, 90_000);
});
