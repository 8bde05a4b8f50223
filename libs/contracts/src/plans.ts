import { registerDecorator, type ValidationArguments } from 'class-validator';
import { type Plan, Plans } from './keys';
import { type BudgetWindowSpec, budgetWindowsProblem } from './proxy-keys/budget-window';

/** Proxy keys an account may hold, by plan (spec, Limits). */
export const PROXY_KEY_CAPS: Record<Plan, number> = {
  free: 10,
  basic: 15,
  standard: 30,
  pro: 50,
  enterprise: 100,
};

/**
 * Token windows a plan gives its DevPass keys (`DEVPASS_TOKEN_WINDOWS`, on key-service and
 * metering-service): every request of a DevPass key is admitted only while each window has room
 * for its worst case (prompt plus output cap) and is counted in input plus output tokens. Usage
 * still never touches credits. `none`: no windows for that plan.
 */
export const DEFAULT_DEVPASS_TOKEN_WINDOWS =
  'free=5h:500000|weekly:2500000,basic=5h:1000000|weekly:5000000,standard=5h:2500000|weekly:12500000,pro=5h:10000000|weekly:50000000,enterprise=5h:50000000|weekly:250000000';

/** One DevPass token window: `period:tokens` or `period:tokens@Zone`. */
const DEVPASS_WINDOW = /^([a-z0-9]+):([1-9]\d{0,14})(?:@([A-Za-z0-9_+\-/]+))?$/;

/**
 * `DEVPASS_TOKEN_WINDOWS` as windows per plan (the defaults for plans it leaves out), or the first
 * problem: `plan=period:tokens[@Zone]|…` pairs separated by commas, `plan=none` for no windows.
 */
export function parseDevPassWindows(value: string): { windows: Record<Plan, BudgetWindowSpec[]> } | { problem: string } {
  const windows = {} as Record<Plan, BudgetWindowSpec[]>;
  for (const source of [DEFAULT_DEVPASS_TOKEN_WINDOWS, value]) {
    for (const pair of source.split(',').filter((item) => item.trim() !== '')) {
      const [plan, list] = pair.trim().split('=');
      if (!(Plans as readonly string[]).includes(plan) || list === undefined)
        return { problem: `'${pair}' must be <plan>=<windows> with a plan of ${Plans.join(', ')}` };
      if (list === 'none') {
        windows[plan as Plan] = [];
        continue;
      }
      const specs: BudgetWindowSpec[] = [];
      for (const item of list.split('|')) {
        const match = DEVPASS_WINDOW.exec(item);
        if (!match) return { problem: `'${item}' must be <period>:<tokens>[@<time zone>]` };
        const [, period, amount, timezone = 'UTC'] = match;
        specs.push({ period, timezone, amount });
      }
      const problem = budgetWindowsProblem(
        specs.map((spec) => ({ amount: Number(spec.amount), period: spec.period, timezone: spec.timezone })),
        plan,
      );
      if (problem) return { problem };
      windows[plan as Plan] = specs;
    }
  }
  return { windows };
}

/** Validates `DEVPASS_TOKEN_WINDOWS` in a service's environment class, naming the first problem. */
export function IsDevPassWindows(): PropertyDecorator {
  const problemOf = (value: unknown): string | null => {
    if (typeof value !== 'string') return 'must be a string';
    const parsed = parseDevPassWindows(value);
    return 'problem' in parsed ? parsed.problem : null;
  };
  return (target, propertyName) =>
    registerDecorator({
      name: 'isDevPassWindows',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: (args: ValidationArguments) => `${args.property}: ${problemOf(args.value) ?? ''}` },
      validator: { validate: (value: unknown) => problemOf(value) === null },
    });
}
