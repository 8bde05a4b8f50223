import { createHash } from 'node:crypto';

/** What ordering needs of a route. */
export interface PlannedRoute {
  label: string;
  priority: number;
  weight: number;
}

/** A value in (0, 1) from `key` and a route's label: the same for every replica and every request. */
export function unitHash(key: string, label: string): number {
  const digest = createHash('sha256').update(key).update('\u0000').update(label).digest();
  return (digest.readUIntBE(0, 6) + 0.5) / 2 ** 48;
}

/**
 * The order in which one call tries a model's routes: priority groups, lowest first; within a
 * group, weighted rendezvous hashing (highest random weight, score −weight / ln u). With an
 * `affinity` key, u is a hash of the key and the route's label, so a conversation keeps its route
 * while that route is usable and moves to its next-best one when it is not, and the share of keys
 * that prefer each route follows the weights. Without a key, u is random: a weighted shuffle.
 */
export function routePlan<T extends PlannedRoute>(routes: readonly T[], affinity?: string | (() => string), random: () => number = Math.random): T[][] {
  let key: string | undefined;
  const priorities = [...new Set(routes.map((route) => route.priority))].sort((a, b) => a - b);
  return priorities.map((priority) => {
    const group = routes.filter((route) => route.priority === priority);
    if (group.length === 1) return group;
    // Computed only when there is a choice to make (most models have one route per priority).
    if (affinity !== undefined && key === undefined) key = typeof affinity === 'function' ? affinity() : affinity;
    const scored = group.map((route) => {
      const u = key !== undefined ? unitHash(key, route.label) : Math.min(Math.max(random(), Number.EPSILON), 1 - Number.EPSILON);
      return { route, score: -route.weight / Math.log(u) };
    });
    return scored.sort((a, b) => b.score - a.score).map((entry) => entry.route);
  });
}
