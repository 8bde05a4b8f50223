/**
 * Catalog entries for the routing tests (routing/*.spec.ts): models spread over the fake OpenAI
 * upstream's pools (`pool-*`, see fake-upstreams.ts), each test with pools of its own.
 */
export function routingTestModels(openaiRoute: (upstream: string) => object): Record<string, unknown>[] {
  const text = { owned_by: 'e2e', created: 1767225600, tokens: 32768, max_output_tokens: 64, pricing: { input: 1, output: 2 } };
  const chat = (id: string, routes: object[]) => ({ ...text, id, endpoints: ['chat.completions', 'responses', 'messages'], routes });
  const pool = (name: string, upstream: string, extra: Record<string, unknown> = {}) => ({ ...openaiRoute(upstream), name, ...extra });
  // Short cooldowns, so recovery is seen within a test; long ones where the test needs the route to stay out.
  const quick = { failures: 3, window_seconds: 30, cooldown_seconds: 2 };
  const held = { failures: 4, window_seconds: 60, cooldown_seconds: 120 };
  return [
    chat('route-weighted', [pool('heavy', 'pool-weighted-heavy', { weight: 3 }), pool('light', 'pool-weighted-light', { weight: 1 })]),
    chat('route-breaker', [pool('a', 'pool-breaker-a', { breaker: quick }), pool('b', 'pool-breaker-b', { breaker: quick })]),
    chat('route-shared-start', [pool('a', 'pool-shared-start-a', { breaker: held }), pool('b', 'pool-shared-start-b', { breaker: held })]),
    chat('route-shared-live', [pool('a', 'pool-shared-live-a', { breaker: held }), pool('b', 'pool-shared-live-b', { breaker: held })]),
    chat('route-all-open', [pool('only', 'pool-all-open-only', { breaker: held })]),
    chat('route-failing-only', [pool('only', 'pool-failing-only', { breaker: held })]),
    chat('route-wait-once', [pool('only', 'pool-wait-once', { breaker: held })]),
    chat('route-quota', [pool('capped', 'pool-quota-capped', { rpm: 3 }), pool('spill', 'pool-quota-spill', { priority: 1 })]),
    chat('route-quota-all', [pool('one', 'pool-quota-all-one', { rpm: 2 }), pool('two', 'pool-quota-all-two', { rpm: 1 })]),
    // Weights (even equal ones) make the routes one group; without priority or weight they would be ordered fallbacks.
    chat('route-sticky', [pool('a', 'pool-sticky-a', { weight: 1 }), pool('b', 'pool-sticky-b', { weight: 1 }), pool('c', 'pool-sticky-c', { weight: 1 })]),
    {
      // Video jobs (video/routing.spec.ts): a failing first route opens, the fallback serves.
      id: 'route-video-breaker',
      owned_by: 'e2e',
      created: 1767225600,
      pricing: { input: 0, output: 0, per_item: 0.25 },
      endpoints: ['videos.generations'],
      sizes: ['16:9'],
      routes: ['a', 'b'].map((name, priority) => ({
        ...pool(name, `pool-video-${name}`, { priority, breaker: held }),
        options: { poll_interval_ms: 100, seconds: '8' },
      })),
    },
    {
      ...text,
      id: 'route-embed',
      endpoints: ['embeddings'],
      routes: [
        { adapter: 'simulator', upstream_model: 'sim-embed', name: 'e3', weight: 3 },
        { adapter: 'simulator', upstream_model: 'sim-embed', name: 'e1', weight: 1 },
      ],
    },
  ];
}

/**
 * The other tests' models fail on purpose (always-500, bad-key, cut-off, ...) and count on every
 * request reaching the upstream: their breakers never open here (1000 failures within 1 s).
 */
export function withoutBreakers(models: Record<string, unknown>[]): Record<string, unknown>[] {
  return models.map((model) => ({
    ...model,
    routes: (model.routes as Record<string, unknown>[]).map((route) => ({ breaker: { failures: 1000, window_seconds: 1 }, ...route })),
  }));
}
