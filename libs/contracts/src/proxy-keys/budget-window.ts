import { IANAZone } from 'luxon';
import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';

/**
 * The grammar of a proxy key's budget windows (`budgets` on create and update): a rolling duration
 * (`30m` … `90d`) or a calendar unit, aligned to midnight in an IANA time zone (default UTC). How
 * time is cut into windows is libs/billing's budget-windows.ts.
 */
export const CalendarPeriods = ['daily', 'weekly', 'monthly', 'quarterly'] as const;
export type CalendarPeriod = (typeof CalendarPeriods)[number];

export const MAX_BUDGET_WINDOWS = 8;
export const ROLLING_MIN_MS = 30 * 60_000;
export const ROLLING_MAX_MS = 90 * 86_400_000;
/** The largest amount of one window, as for the allocation: the decimal column's bounds stay far. */
export const BUDGET_AMOUNT_MAX = 1_000_000_000;

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const UNIT_MS = { m: MINUTE_MS, h: HOUR_MS, d: DAY_MS } as const;
const ROLLING = /^([1-9]\d{0,6})([mhd])$/;

/** A budget window as sent and stored: credits per period, in a zone. */
export interface BudgetWindow {
  amount: number;
  period: string;
  timezone?: string;
}

/** A window as the key holds it: the zone filled in, the amount a decimal string. */
export interface BudgetWindowSpec {
  period: string;
  timezone: string;
  amount: string;
}

export type ParsedPeriod = { kind: 'rolling'; lengthMs: number; granularityMs: number } | { kind: 'calendar'; unit: CalendarPeriod };

/**
 * `5h`, `7d`, `daily`…; null when the period is not one the gateway knows or is out of range. A
 * rolling window is counted in buckets of 1 minute up to a day long, of 1 hour beyond.
 */
export function parsePeriod(period: unknown): ParsedPeriod | null {
  if (typeof period !== 'string') return null;
  if ((CalendarPeriods as readonly string[]).includes(period)) return { kind: 'calendar', unit: period as CalendarPeriod };
  const match = ROLLING.exec(period);
  if (!match) return null;
  const lengthMs = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (lengthMs < ROLLING_MIN_MS || lengthMs > ROLLING_MAX_MS) return null;
  return { kind: 'rolling', lengthMs, granularityMs: lengthMs <= DAY_MS ? MINUTE_MS : HOUR_MS };
}

/**
 * Whether `zone` is an IANA time zone name this runtime knows (`UTC`, `Asia/Kolkata`, …). Names start
 * with a letter: an offset such as `+05:30` is not one, though Node.js 22 and later accept it as a
 * zone (and PostgreSQL would read it with the POSIX sign, east of UTC as west).
 */
export function isTimeZone(zone: unknown): boolean {
  return typeof zone === 'string' && /^[A-Za-z]/.test(zone) && zone.length <= 64 && IANAZone.isValidZone(zone);
}

/** What is wrong with a `budgets` list, naming the field (`budgets[1].period: …`); null when nothing is. */
export function budgetWindowsProblem(value: unknown, field = 'budgets'): string | null {
  if (!Array.isArray(value)) return `${field} must be an array of {amount, period, timezone?}`;
  if (value.length > MAX_BUDGET_WINDOWS) return `${field} may hold at most ${MAX_BUDGET_WINDOWS} windows, got ${value.length}`;
  const seen = new Set<string>();
  for (const [index, entry] of value.entries()) {
    const at = `${field}[${index}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return `${at} must be an object {amount, period, timezone?}`;
    const { amount, period, timezone, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) return `${at}.${unknown} is not a budget field (amount, period, timezone)`;
    if (typeof amount !== 'number' || !Number.isFinite(amount)) return `${at}.amount must be a number`;
    if (amount < 0) return `${at}.amount must not be less than 0`;
    if (amount > BUDGET_AMOUNT_MAX) return `${at}.amount must not be greater than ${BUDGET_AMOUNT_MAX}`;
    if (Math.round(amount * 1e8) / 1e8 !== amount) return `${at}.amount must have at most 8 decimal places`;
    if (!parsePeriod(period)) {
      return `${at}.period must be a rolling duration from 30m to 90d (minutes m, hours h or days d, e.g. 5h, 7d) or one of ${CalendarPeriods.join(', ')}, got ${JSON.stringify(period)}`;
    }
    if (timezone !== undefined && !isTimeZone(timezone))
      return `${at}.timezone must be an IANA time zone name (e.g. UTC, Europe/Berlin), got ${JSON.stringify(timezone)}`;
    if (seen.has(period as string)) return `${at}.period: '${String(period)}' is listed twice; each window needs its own period`;
    seen.add(period as string);
  }
  return null;
}

/** The key's windows as stored: the zone filled in (UTC), the amount a decimal string. */
export function toBudgetWindowSpecs(windows: BudgetWindow[]): BudgetWindowSpec[] {
  // Fixed-point (at most 8 decimals, validated), never exponent notation (`String(1e-8)` is `1e-8`).
  const decimal = (amount: number) => amount.toFixed(8).replace(/\.?0+$/, '') || '0';
  return windows.map(({ amount, period, timezone }) => ({ period, timezone: timezone ?? 'UTC', amount: decimal(amount) }));
}

export function IsBudgetWindows(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isBudgetWindows',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: (args: ValidationArguments) => budgetWindowsProblem(args.value, args.property) ?? '', ...options },
      validator: { validate: (value: unknown) => budgetWindowsProblem(value, String(propertyName)) === null },
    });
}
