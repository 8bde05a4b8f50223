import { api, ApiResponse, sleep } from '../support/api';
import { scrape, valueOf } from '../support/prometheus';
import { suiteInfo } from '../support/suite-info';

/** Calls per pool upstream of the fake OpenAI server so far (see fake-upstreams.ts, "Pools"). */
export async function poolCalls(): Promise<Record<string, number>> {
  return (await fetch(`${suiteInfo().fakeOpenAI}/__pools`)).json() as Promise<Record<string, number>>;
}

export async function setPool(name: string, mode: 'ok' | 'fail' | 'limit' | 'limit_once', retryAfter?: number): Promise<void> {
  const response = await fetch(`${suiteInfo().fakeOpenAI}/__pools/${encodeURIComponent(name)}`, {
    method: 'PUT',
    body: JSON.stringify({ mode, ...(retryAfter !== undefined ? { retry_after: retryAfter } : {}) }),
  });
  if (!response.ok) throw new Error(`the fake refused the pool setting: ${response.status}`);
}

/** Which pools `work` called, and how often. */
export async function callsDuring(work: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await poolCalls();
  await work();
  const after = await poolCalls();
  return Object.fromEntries(
    Object.entries(after)
      .map(([name, calls]) => [name, calls - (before[name] ?? 0)])
      .filter(([, calls]) => calls !== 0),
  );
}

export function chat(key: string, model: string, text: string, extra: Record<string, unknown> = {}): Promise<ApiResponse> {
  return api('POST', '/v1/chat/completions', { key, body: { model, messages: [{ role: 'user', content: text }], max_tokens: 16, ...extra } });
}

/** `count` calls, `concurrency` at a time; the responses in order. */
export async function many<T>(count: number, concurrency: number, call: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await call(index);
      }
    }),
  );
  return results;
}

export const routerMetricsUrl = (healthPort = suiteInfo().services['inference-router'].healthPort): string => `http://127.0.0.1:${healthPort}/metrics`;

/** `gateway_route_state` of a route on one router replica (0 closed, 1 half-open, 2 open). */
export async function routeState(route: string, metricsUrl = routerMetricsUrl()): Promise<number> {
  return valueOf((await scrape(metricsUrl)).text, 'gateway_route_state', { route });
}

export async function routeRequests(route: string, outcome: string, metricsUrl = routerMetricsUrl()): Promise<number> {
  return valueOf((await scrape(metricsUrl)).text, 'gateway_route_requests_total', { route, outcome });
}

/** Repeats `step` until `done` holds, within `timeoutMs`; `what` names the condition in the failure. */
export async function until(
  what: string,
  done: () => Promise<boolean>,
  step: () => Promise<unknown> = async () => sleep(100),
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await step();
  }
}
