import type { SpendWindow } from '@gateway/contracts';

const DAY_MS = 86_400_000;

/**
 * The start (UTC) of the spend window a moment falls in: the day, the ISO week (Monday) or the
 * month. A key without a window has one lifetime allocation: null.
 */
export function windowStart(window: SpendWindow | null, at: Date): Date | null {
  if (!window) return null;
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  switch (window) {
    case 'daily':
      return new Date(day);
    case 'weekly':
      // getUTCDay: Sunday 0 … Saturday 6; weeks start on Monday.
      return new Date(day - ((at.getUTCDay() + 6) % 7) * DAY_MS);
    case 'monthly':
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  }
}

/**
 * When the spend window a moment falls in ends (UTC): the next day, the next Monday, the 1st of
 * the next month, where spend starts again from zero. A lifetime allocation never resets: null.
 */
export function nextWindowStart(window: SpendWindow | null, at: Date): Date | null {
  const start = windowStart(window, at);
  if (!window || !start) return null;
  switch (window) {
    case 'daily':
      return new Date(start.getTime() + DAY_MS);
    case 'weekly':
      return new Date(start.getTime() + 7 * DAY_MS);
    case 'monthly':
      // Date.UTC carries month 12 into January of the next year.
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  }
}

/** The id a key's spend is counted under in Redis: its window's start (ms), or `life` without a window. */
export function spendWindowId(window: SpendWindow | null, at: Date): string {
  const start = windowStart(window, at);
  return start ? String(start.getTime()) : 'life';
}

/**
 * Whether spend counted in the window that started at `startedAt` (null: none yet) still counts at
 * `now`: always without a window, otherwise only while that window is the current one.
 */
export function countsInCurrentWindow(window: SpendWindow | null, startedAt: Date | number | null, now: Date): boolean {
  const current = windowStart(window, now);
  if (current === null) return true;
  return startedAt !== null && new Date(startedAt).getTime() >= current.getTime();
}

/**
 * `windowStart` in SQL, for the ledger's set-based statements: the start (UTC) of the spend window
 * `at` (a timestamptz expression) falls in for `window` (a spend_window expression); NULL for a
 * lifetime allocation. PostgreSQL's weeks start on Monday too. spend-window.int-spec.ts checks that
 * it agrees with `windowStart` over every day of a leap year.
 */
export const windowStartSql = (window: string, at: string): string => `
  (CASE ${window} WHEN 'daily' THEN date_trunc('day', ${at} AT TIME ZONE 'UTC')
                  WHEN 'weekly' THEN date_trunc('week', ${at} AT TIME ZONE 'UTC')
                  WHEN 'monthly' THEN date_trunc('month', ${at} AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC'`;
