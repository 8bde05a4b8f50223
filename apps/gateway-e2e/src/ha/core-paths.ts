/**
 * The core paths every high-availability set-up must carry (ha/*.spec.ts): keys (create, toggle,
 * the revocation barrier), a chat and a chat stream, a proxy key's allocation, the rate limit, the
 * ledger, and a video job.
 */
import { api, createAccount, ledgerEntry, TestAccount } from '../support/api';
import { isFinal, VideoStream } from '../support/video-stream';

export async function coreScenario(base: string): Promise<void> {
  const owner: TestAccount = createAccount('enterprise', '100');

  // Keys: a proxy key works, is refused on the very next request once toggled off, and works again.
  const created = await api('POST', '/v1/auth/proxy/create', { key: owner.masterKey, base, body: { name: 'ha', allocated_ammount: 0.0001 } });
  expect(created.status).toBe(201);
  const proxyKey: string = created.body.key;
  expect((await api('GET', '/v1/models', { key: proxyKey, base })).status).toBe(200);
  expect((await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, base, body: { proxy_key: proxyKey } })).body.status).toBe(false);
  expect((await api('GET', '/v1/models', { key: proxyKey, base })).status).toBe(401);
  expect((await api('POST', '/v1/auth/proxy/toggle', { key: owner.masterKey, base, body: { proxy_key: proxyKey } })).body.status).toBe(true);

  // A chat, metered once.
  const chat = await api('POST', '/v1/chat/completions', {
    key: owner.masterKey,
    base,
    body: { model: 'sim-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] },
  });
  expect(chat.status).toBe(200);
  const chatId = chat.headers.get('x-request-id') as string;
  expect(await ledgerEntry(owner.masterKey, chatId, { base })).toMatchObject({ request_id: chatId, status: 'success' });

  // A stream, to its end, with usage.
  const stream = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.masterKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'sim-chat',
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    }),
  });
  expect(stream.status).toBe(200);
  const text = await stream.text();
  expect(text).toContain('"usage"');
  expect(text.trim().endsWith('data: [DONE]')).toBe(true);
  const streamId = stream.headers.get('x-request-id') as string;
  expect(await ledgerEntry(owner.masterKey, streamId, { base })).toMatchObject({ request_id: streamId });

  // The key's allocation: spent by a few chats, then 402 naming it.
  let refused: { body: any } | undefined;
  for (let attempt = 0; attempt < 50 && !refused; attempt++) {
    const response = await api('POST', '/v1/chat/completions', {
      key: proxyKey,
      base,
      body: { model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'spend' }] },
    });
    if (response.status === 402) refused = response;
    else expect(response.status).toBe(200);
  }
  expect(refused?.body.error.message).toMatch(/allocation/i);

  // The rate limit (the suite's free plan: 40 requests a minute).
  const free = createAccount('free', '10');
  const statuses: number[] = [];
  for (let index = 0; index < 45; index++) statuses.push((await api('GET', '/v1/models', { key: free.masterKey, base })).status);
  expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(0);
  expect(statuses).toContain(429);
  expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);

  // A video job through the queue, to its file.
  const video = await VideoStream.open({ key: owner.masterKey, base, body: { model: 'sim-video-quick', prompt: 'a cluster' } });
  expect(video.response.status).toBe(200);
  const final = await video.until(isFinal, 'the finished video');
  expect(final.status).toBe('completed');
}
