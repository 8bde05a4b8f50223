/**
 * A model's traffic spreads over its routes by weight (text and embeddings), and one conversation
 * keeps its route — for the provider's prompt cache — until that route leaves the rotation.
 */
import { api, createAccount, TestAccount } from '../support/api';
import { UsageWatcher } from '../support/usage-events';
import { callsDuring, chat, many, routeRequests, setPool } from './pools';

describe('routing: weights and stickiness', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it('splits a model’s conversations 3:1 over routes of weight 3 and 1', async () => {
    const total = 400;
    const calls = await callsDuring(async () => {
      const responses = await many(total, 8, (i) => chat(account.masterKey, 'route-weighted', `weighted conversation number ${i}`));
      expect(responses.filter((response) => response.status !== 200).map((response) => response.text)).toEqual([]);
    });
    expect(calls['pool-weighted-heavy'] + calls['pool-weighted-light']).toBe(total);
    const share = calls['pool-weighted-heavy'] / total;
    expect(share).toBeGreaterThan(0.68);
    expect(share).toBeLessThan(0.82);
  });

  it('spreads embeddings by weight too (a family without stickiness)', async () => {
    const before = { e3: await routeRequests('route-embed/e3', 'success'), e1: await routeRequests('route-embed/e1', 'success') };
    const total = 200;
    const responses = await many(total, 8, (i) =>
      api('POST', '/v1/embeddings', { key: account.masterKey, body: { model: 'route-embed', input: `text ${i}` } }),
    );
    expect(responses.filter((response) => response.status !== 200).map((response) => response.text)).toEqual([]);
    const e3 = (await routeRequests('route-embed/e3', 'success')) - before.e3;
    const e1 = (await routeRequests('route-embed/e1', 'success')) - before.e1;
    expect(e3 + e1).toBe(total);
    expect(e3 / total).toBeGreaterThan(0.62);
    expect(e3 / total).toBeLessThan(0.88);
  });

  it('keeps a conversation on one route, moves it when that route opens, and keeps it on the new one', async () => {
    const turn = (text: string) => chat(account.masterKey, 'route-sticky', text, { user: 'sticky-user-1' });
    const first = await callsDuring(async () => {
      for (let i = 0; i < 6; i++) expect((await turn(`turn ${i}`)).status).toBe(200);
    });
    expect(Object.values(first)).toEqual([6]);
    const home = Object.keys(first)[0];
    // The usage event names the route that served it (for operators); the client's answer does not.
    const usage = await UsageWatcher.open();
    try {
      const served = await turn('which route?');
      expect(served.status).toBe(200);
      const event = await usage.single(served.headers.get('x-request-id')!);
      expect(event.upstreamRoute).toBe(`route-sticky/${home.slice('pool-sticky-'.length)}`);
      expect(served.text).not.toContain('route-sticky/');
      expect([...served.headers.values()].join(' ')).not.toContain('route-sticky/');
    } finally {
      await usage.close();
    }
    // A 429 with Retry-After takes the route out for that long.
    await setPool(home, 'limit', 60);
    try {
      const moved = await callsDuring(async () => {
        for (let i = 0; i < 6; i++) expect((await turn(`later turn ${i}`)).status).toBe(200);
      });
      expect(moved[home]).toBe(1); // the 429 that opened it; never asked again
      const others = Object.entries(moved).filter(([name]) => name !== home);
      expect(others).toHaveLength(1);
      expect(others[0][1]).toBe(6);
      // Other conversations still use every route but the open one.
      const spread = await callsDuring(() => many(30, 4, (i) => chat(account.masterKey, 'route-sticky', `another conversation ${i}`)));
      expect(spread[home]).toBeUndefined();
      expect(Object.keys(spread)).toHaveLength(2);
    } finally {
      await setPool(home, 'ok');
    }
  });
});
