import type { Plan } from './keys';

/** Proxy keys an account may hold, by plan (spec, Limits). */
export const PROXY_KEY_CAPS: Record<Plan, number> = {
  free: 10,
  basic: 15,
  standard: 30,
  pro: 50,
  enterprise: 100,
};
