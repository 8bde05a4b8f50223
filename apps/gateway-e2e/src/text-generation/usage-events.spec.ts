/**
 * One usage event per request on the `USAGE` JetStream stream (`usage.recorded`, message id =
 * request id = the response's `x-request-id`), with the route, model, key and the same token
 * counts the client was shown — for whole replies, streams and failures.
 */
import { api, createAccount, createDevPass, createProxyKey, sleep, TestAccount } from '../support/api';
import { anthropicClient, newRequestId, openaiClient, withRequestId } from '../support/clients';
import { storedKey } from '../support/keys-db';
import { UsageWatcher } from '../support/usage-events';

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('usage events', () => {
  let account: TestAccount;
  let usage: UsageWatcher;

  beforeAll(async () => {
    account = createAccount('pro', '100');
    usage = await UsageWatcher.open();
  });

  afterAll(async () => {
    await usage?.close();
  });

  it('records a non-streamed chat completion once, with its route, model, key and the tokens the client saw', async () => {
    const requestId = newRequestId('usage-chat');
    const before = nowSeconds();
    const { data: completion, response } = await openaiClient(account.masterKey)
      .chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Count my tokens' }] }, withRequestId(requestId))
      .withResponse();
    expect(response.headers.get('x-client-request-id')).toBe(requestId);
    const gatewayId = response.headers.get('x-request-id')!;
    expect(gatewayId).toMatch(/^req_[0-9a-f]{32}$/);

    const events = await usage.waitFor(requestId);
    expect(events).toHaveLength(1);
    expect(events[0].subject).toBe('usage.recorded');
    expect(events[0].msgId).toBe(gatewayId);
    const key = await storedKey(account.masterKey);
    expect(events[0].event).toEqual({
      requestId: gatewayId,
      clientRequestId: requestId,
      accountId: account.accountId,
      keyId: key.id,
      keyType: 'master',
      maskedKey: `ek-...${account.masterKey.slice(-4)}`,
      model: 'sim-chat',
      route: 'chat.completions',
      inputTokens: completion.usage!.prompt_tokens,
      outputTokens: completion.usage!.completion_tokens,
      status: 'success',
      ip: '127.0.0.1',
      timestamp: expect.any(Number),
      provider: 'simulator',
      upstreamRoute: 'sim-chat/0',
    });
    expect(events[0].event.maskedKey).toBe(key.maskedKey);
    expect(events[0].event.timestamp).toBeGreaterThanOrEqual(before - 1);
    expect(events[0].event.timestamp).toBeLessThanOrEqual(nowSeconds() + 1);
  });

  it('uses the generated request id when the client sends none: event id = x-request-id', async () => {
    const { response } = await openaiClient(account.masterKey).responses.create({ model: 'sim-chat', input: 'No id from me' }).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(response.headers.get('x-client-request-id')).toBeNull();
    const event = await usage.single(requestId);
    expect(event).toMatchObject({ requestId, route: 'responses', model: 'sim-chat', status: 'success' });
    expect(event.clientRequestId).toBeUndefined();
  });

  it('a client reusing its request id gets each request metered on its own (the id is only echoed)', async () => {
    // Sent as x-request-id, as clients of other gateways do: it is the client's id, not the ledger's.
    const clientId = newRequestId('reused');
    const owner = createAccount('pro', '100');
    const client = openaiClient(owner.masterKey);
    const calls = await Promise.all(
      [1, 2].map(() =>
        client.chat.completions
          .create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Same id twice' }] }, { headers: { 'x-request-id': clientId } })
          .withResponse(),
      ),
    );
    const gatewayIds = calls.map(({ response }) => response.headers.get('x-request-id'));
    expect(new Set(gatewayIds).size).toBe(2);
    for (const { response } of calls) expect(response.headers.get('x-client-request-id')).toBe(clientId);
    const events = await usage.waitFor(clientId, { settleMs: 1000 });
    expect(events.map((recorded) => recorded.event.requestId).sort()).toEqual([...gatewayIds].sort());
    for (const recorded of events) expect(recorded.event).toMatchObject({ clientRequestId: clientId, status: 'success' });
    // Both are in the ledger, each charged.
    let entries: any[] = [];
    for (let attempt = 0; attempt < 100 && entries.length < 2; attempt++) {
      if (attempt > 0) await sleep(100);
      const body = (await api('GET', '/v1/user/logs?limit=10', { key: owner.masterKey })).body;
      entries = Array.isArray(body) ? body : [];
    }
    expect(entries).toHaveLength(2);
    for (const entry of entries) expect(Number(entry.credits)).toBeGreaterThan(0);
  });

  it('records a non-streamed responses call and a non-streamed messages call with their routes', async () => {
    const responsesId = newRequestId('usage-resp');
    const response = await openaiClient(account.masterKey).responses.create({ model: 'fake-openai', input: 'Responses usage' }, withRequestId(responsesId));
    expect(await usage.single(responsesId)).toMatchObject({
      route: 'responses',
      model: 'fake-openai',
      provider: 'openai',
      status: 'success',
      inputTokens: response.usage!.input_tokens,
      outputTokens: response.usage!.output_tokens,
    });

    const messagesId = newRequestId('usage-msg');
    const message = await anthropicClient(account.masterKey).messages.create(
      { model: 'fake-anthropic', max_tokens: 200, messages: [{ role: 'user', content: 'Messages usage' }] },
      withRequestId(messagesId),
    );
    expect(await usage.single(messagesId)).toMatchObject({
      route: 'messages',
      model: 'fake-anthropic',
      provider: 'anthropic',
      status: 'success',
      inputTokens: message.usage.input_tokens,
      outputTokens: message.usage.output_tokens,
    });
  });

  it('records a streamed chat completion once, with the tokens of its usage chunk', async () => {
    const requestId = newRequestId('usage-chatstream');
    const { data: stream, response } = await openaiClient(account.masterKey)
      .chat.completions.create(
        { model: 'sim-chat', messages: [{ role: 'user', content: 'Stream and count' }], stream: true, stream_options: { include_usage: true } },
        withRequestId(requestId),
      )
      .withResponse();
    expect(response.headers.get('x-client-request-id')).toBe(requestId);
    let reported: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const chunk of stream) if (chunk.usage) reported = chunk.usage;
    expect(reported).toBeDefined();
    expect(await usage.single(requestId)).toMatchObject({
      clientRequestId: requestId,
      route: 'chat.completions',
      model: 'sim-chat',
      status: 'success',
      inputTokens: reported!.prompt_tokens,
      outputTokens: reported!.completion_tokens,
    });
  });

  it('records streamed responses and messages once each, with the tokens of the final usage', async () => {
    const responsesId = newRequestId('usage-respstream');
    const final = await openaiClient(account.masterKey)
      .responses.stream({ model: 'fake-openai', input: 'Stream responses usage' }, withRequestId(responsesId))
      .finalResponse();
    expect(await usage.single(responsesId)).toMatchObject({
      route: 'responses',
      model: 'fake-openai',
      status: 'success',
      inputTokens: final.usage!.input_tokens,
      outputTokens: final.usage!.output_tokens,
    });

    const messagesId = newRequestId('usage-msgstream');
    const message = await anthropicClient(account.masterKey)
      .messages.stream({ model: 'fake-anthropic', max_tokens: 200, messages: [{ role: 'user', content: 'Stream messages usage' }] }, withRequestId(messagesId))
      .finalMessage();
    expect(await usage.single(messagesId)).toMatchObject({
      route: 'messages',
      model: 'fake-anthropic',
      status: 'success',
      inputTokens: message.usage.input_tokens,
      outputTokens: message.usage.output_tokens,
    });
  });

  it('records the route that served a request after a fallback', async () => {
    const requestId = newRequestId('usage-fallback');
    const completion = await openaiClient(account.masterKey).chat.completions.create(
      { model: 'fallback-chat', messages: [{ role: 'user', content: 'Fall back' }] },
      withRequestId(requestId),
    );
    expect(await usage.single(requestId)).toMatchObject({
      model: 'fallback-chat',
      provider: 'simulator',
      upstreamRoute: 'fallback-chat/1', // the route that served it, after the first failed
      status: 'success',
      inputTokens: completion.usage!.prompt_tokens,
      outputTokens: completion.usage!.completion_tokens,
    });
  });

  it('names proxy and DevPass keys by their own id, type and mask', async () => {
    const proxy = await createProxyKey(account.masterKey);
    const proxyRequest = newRequestId('usage-proxy');
    await openaiClient(proxy.key).chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Proxy' }] }, withRequestId(proxyRequest));
    const proxyStored = await storedKey(proxy.key);
    expect(await usage.single(proxyRequest)).toMatchObject({
      accountId: account.accountId,
      keyId: proxyStored.id,
      keyType: 'proxy',
      maskedKey: `ek-proxy-...${proxy.key.slice(-4)}`,
    });

    const devKey = createDevPass(account.accountId);
    const devRequest = newRequestId('usage-dev');
    await anthropicClient(devKey).messages.create(
      { model: 'sim-coder:dev', max_tokens: 200, messages: [{ role: 'user', content: 'Dev' }] },
      withRequestId(devRequest),
    );
    const devStored = await storedKey(devKey);
    expect(await usage.single(devRequest)).toMatchObject({
      accountId: account.accountId,
      keyId: devStored.id,
      keyType: 'dev',
      maskedKey: `ek-dev-...${devKey.slice(-4)}`,
      model: 'sim-coder:dev',
      route: 'messages',
      status: 'success',
    });
  });

  it('records a request the upstream refused with 400 once, with status error', async () => {
    const requestId = newRequestId('usage-reject');
    const response = await api('POST', '/v1/chat/completions', {
      key: account.masterKey,
      headers: { 'x-request-id': requestId },
      body: { model: 'reject-400-chat', messages: [{ role: 'user', content: 'Refuse me' }] },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-client-request-id')).toBe(requestId);
    expect(await usage.single(requestId)).toMatchObject({
      clientRequestId: requestId,
      model: 'reject-400-chat',
      route: 'chat.completions',
      status: 'error',
      keyType: 'master',
      accountId: account.accountId,
    });
  });

  it('records a request refused as invalid (400) once, with status error, on each route', async () => {
    const cases = [
      { path: '/v1/chat/completions', route: 'chat.completions', body: { model: 'sim-chat', temperature: 9, messages: [{ role: 'user', content: 'x' }] } },
      { path: '/v1/responses', route: 'responses', body: { model: 'sim-chat', temperature: 9, input: 'x' } },
      { path: '/v1/messages', route: 'messages', body: { model: 'sim-chat', max_tokens: 10, temperature: 9, messages: [{ role: 'user', content: 'x' }] } },
    ];
    for (const testCase of cases) {
      const requestId = newRequestId('usage-invalid');
      const response = await api('POST', testCase.path, { key: account.masterKey, headers: { 'x-request-id': requestId }, body: testCase.body });
      expect({ path: testCase.path, status: response.status }).toEqual({ path: testCase.path, status: 400 });
      expect(await usage.single(requestId)).toMatchObject({
        clientRequestId: requestId,
        route: testCase.route,
        model: 'sim-chat',
        status: 'error',
        outputTokens: 0,
      });
    }
  });
});
