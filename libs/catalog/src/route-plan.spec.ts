import { routePlan } from './route-plan';

const route = (label: string, weight = 1, priority = 0) => ({ label, weight, priority });

describe('routePlan', () => {
  it('orders priority groups lowest first, and spreads the first pick of a group by weight', () => {
    const routes = [route('m/a', 3), route('m/b', 1), route('m/fallback', 1, 1)];
    const firsts: Record<string, number> = {};
    for (let i = 0; i < 20_000; i++) {
      const plan = routePlan(routes);
      expect(plan.map((group) => group.length)).toEqual([2, 1]);
      expect(plan[1][0].label).toBe('m/fallback');
      firsts[plan[0][0].label] = (firsts[plan[0][0].label] ?? 0) + 1;
    }
    expect(firsts['m/a'] / 20_000).toBeGreaterThan(0.72);
    expect(firsts['m/a'] / 20_000).toBeLessThan(0.78);
  });

  it('gives one affinity key the same order every time, and spreads many keys by weight', () => {
    const routes = [route('m/a', 1), route('m/b', 1), route('m/c', 2)];
    const order = (key: string) => routePlan(routes, key)[0].map((r) => r.label);
    expect(order('conversation-1')).toEqual(order('conversation-1'));
    const firsts: Record<string, number> = {};
    for (let i = 0; i < 20_000; i++) firsts[order(`k${i}`)[0]] = (firsts[order(`k${i}`)[0]] ?? 0) + 1;
    expect(firsts['m/c'] / 20_000).toBeGreaterThan(0.47);
    expect(firsts['m/c'] / 20_000).toBeLessThan(0.53);
  });

  it('moves a key only off the route that left: the others keep their keys (rendezvous)', () => {
    const all = [route('m/a'), route('m/b'), route('m/c')];
    const without = all.filter((r) => r.label !== 'm/b');
    for (let i = 0; i < 500; i++) {
      const first = routePlan(all, `k${i}`)[0][0].label;
      const after = routePlan(without, `k${i}`)[0][0].label;
      if (first !== 'm/b') expect(after).toBe(first);
    }
  });
});
