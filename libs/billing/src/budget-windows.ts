import { DateTime } from 'luxon';
import { type BudgetWindowSpec, type CalendarPeriod, type ParsedPeriod, parsePeriod } from '@gateway/contracts';

/**
 * A proxy key's budget windows beyond its spec allocation (`budgets` on create and update): each an
 * amount of credits per rolling duration (`30m` … `90d`) or per calendar unit aligned to midnight in
 * an IANA time zone. The rules here are shared by the edge (admission: what counts now), metering
 * (settlement: which bucket a charge counts in) and the services that read the ledger (priming and
 * `GET /v1/key`), so all of them cut time the same way.
 *
 * The grammar (periods, zones, limits) is the contracts' budget-window.ts. Spend is kept in
 * buckets. A rolling window keeps one bucket per `granularity` (1 minute for windows up to a day,
 * 1 hour beyond): a charge at `t` counts until its bucket's end plus the window's length has passed, so it leaves the window at most one bucket late, never early (the
 * window is never lenient). A calendar window keeps one bucket per window: a charge counts until
 * the next boundary (midnight, Monday 00:00, the 1st, the 1st of Jan/Apr/Jul/Oct, in the zone,
 * daylight-saving changes included).
 */

/** A window as these rules need it (the amount is not their business). */
type WindowShape = Pick<BudgetWindowSpec, 'period' | 'timezone'>;

function parsed(spec: Pick<WindowShape, 'period'>): ParsedPeriod {
  const period = parsePeriod(spec.period);
  if (!period) throw new Error(`unknown budget period '${spec.period}'`);
  return period;
}

const CALENDAR_UNIT = { daily: 'day', weekly: 'week', monthly: 'month', quarterly: 'quarter' } as const;

/** The calendar window `at` falls in: its start and the next one's (ms), in the window's zone. */
function calendarWindow(unit: CalendarPeriod, timezone: string, at: number): { start: number; end: number } {
  // luxon's weeks start on Monday (ISO); `startOf` and `plus` keep wall-clock midnight across DST.
  const start = DateTime.fromMillis(at, { zone: timezone }).startOf(CALENDAR_UNIT[unit]);
  return { start: start.toMillis(), end: start.plus({ [`${CALENDAR_UNIT[unit]}s`]: 1 }).toMillis() };
}

/**
 * The bucket a charge made at `at` (ms) counts in: its id (the bucket's start, ms) and when it stops
 * counting (ms).
 */
export function windowBucket(spec: WindowShape, at: number): { member: number; expiry: number } {
  const period = parsed(spec);
  if (period.kind === 'calendar') {
    const { start, end } = calendarWindow(period.unit, spec.timezone, at);
    return { member: start, expiry: end };
  }
  const member = Math.floor(at / period.granularityMs) * period.granularityMs;
  return { member, expiry: member + period.granularityMs + period.lengthMs };
}

/**
 * The earliest charge time (ms) that still counts at `now`, and the bucket size to sum the ledger by
 * from there (0: one sum, a calendar window). Charges at or after `from` are the window's spend.
 */
export function windowSpan(spec: WindowShape, now: number): { from: number; granularityMs: number } {
  const period = parsed(spec);
  if (period.kind === 'calendar') return { from: calendarWindow(period.unit, spec.timezone, now).start, granularityMs: 0 };
  return { from: Math.floor((now - period.lengthMs) / period.granularityMs) * period.granularityMs, granularityMs: period.granularityMs };
}

/**
 * When the window's `used` next falls (ms): a calendar window's next boundary; for a rolling window
 * when the oldest charge still inside leaves (`oldest`: that charge's time, ms), null with none.
 */
export function windowResetsAt(spec: WindowShape, now: number, oldest?: number | null): number | null {
  const period = parsed(spec);
  if (period.kind === 'calendar') return calendarWindow(period.unit, spec.timezone, now).end;
  return oldest === undefined || oldest === null ? null : windowBucket(spec, oldest).expiry;
}

/** The id a window's spend is kept under in Redis: its period and zone (amounts may change, the spend stays). */
export const windowKey = (spec: WindowShape): string => `${spec.period}@${spec.timezone}`;
