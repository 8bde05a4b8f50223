import { countsInCurrentWindow, nextWindowStart, spendWindowId, windowStart } from './spend-window';

describe('windowStart', () => {
  const at = new Date('2026-11-22T15:30:00Z'); // a Sunday

  it('starts daily windows at UTC midnight, weekly on Monday, monthly on the 1st', () => {
    expect(windowStart('daily', at)?.toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(windowStart('weekly', at)?.toISOString()).toBe('2026-11-16T00:00:00.000Z');
    expect(windowStart('weekly', new Date('2026-11-23T00:00:00Z'))?.toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(windowStart('monthly', at)?.toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });

  it('has no window for a lifetime allocation', () => {
    expect(windowStart(null, at)).toBeNull();
  });
});

describe('nextWindowStart', () => {
  const at = new Date('2026-11-22T15:30:00Z'); // a Sunday

  it('resets daily windows at the next UTC midnight, weekly on the next Monday, monthly on the next 1st', () => {
    expect(nextWindowStart('daily', at)?.toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(nextWindowStart('weekly', at)?.toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(nextWindowStart('monthly', at)?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('counts a moment on a boundary in the window it starts, so the reset is a whole window later', () => {
    const monday = new Date('2026-11-23T00:00:00Z');
    expect(nextWindowStart('daily', monday)?.toISOString()).toBe('2026-11-24T00:00:00.000Z');
    expect(nextWindowStart('weekly', monday)?.toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(nextWindowStart('monthly', new Date('2026-12-01T00:00:00Z'))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(nextWindowStart('daily', new Date('2026-11-22T23:59:59.999Z'))?.toISOString()).toBe('2026-11-23T00:00:00.000Z');
  });

  it('crosses the end of a month, a leap February and the end of a year', () => {
    expect(nextWindowStart('daily', new Date('2028-02-28T12:00:00Z'))?.toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(nextWindowStart('daily', new Date('2028-02-29T12:00:00Z'))?.toISOString()).toBe('2028-03-01T00:00:00.000Z');
    expect(nextWindowStart('monthly', new Date('2028-02-10T00:00:00Z'))?.toISOString()).toBe('2028-03-01T00:00:00.000Z');
    expect(nextWindowStart('monthly', new Date('2026-12-31T23:59:59Z'))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    // 31 December 2026 is a Thursday: its week ends on Monday 4 January 2027.
    expect(nextWindowStart('weekly', new Date('2026-12-31T08:00:00Z'))?.toISOString()).toBe('2027-01-04T00:00:00.000Z');
  });

  it('never resets a lifetime allocation', () => {
    expect(nextWindowStart(null, at)).toBeNull();
  });

  it('is where the next window starts, for every hour of a leap year', () => {
    const wrong: string[] = [];
    for (const window of ['daily', 'weekly', 'monthly'] as const) {
      for (let t = Date.parse('2028-01-01T00:00:00Z'); t < Date.parse('2029-01-01T00:00:00Z'); t += 3_600_000) {
        const next = (nextWindowStart(window, new Date(t)) as Date).getTime();
        // The last moment before the reset is still in the window `t` is in; the reset starts a new one.
        const lastMomentInWindow = windowStart(window, new Date(next - 1))?.getTime() === windowStart(window, new Date(t))?.getTime();
        const startsOne = windowStart(window, new Date(next))?.getTime() === next;
        if (!(next > t && lastMomentInWindow && startsOne)) wrong.push(`${window} ${new Date(t).toISOString()} -> ${new Date(next).toISOString()}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('spendWindowId and countsInCurrentWindow', () => {
  const now = new Date('2026-11-22T15:30:00Z'); // a Sunday; the week began Monday 16 November

  it('names a window by its start, and a lifetime allocation `life`', () => {
    expect(spendWindowId('weekly', now)).toBe(String(Date.parse('2026-11-16T00:00:00Z')));
    expect(spendWindowId(null, now)).toBe('life');
  });

  it('counts spend only while the window it was counted in is the current one', () => {
    expect(countsInCurrentWindow('weekly', new Date('2026-11-16T00:00:00Z'), now)).toBe(true);
    expect(countsInCurrentWindow('weekly', Date.parse('2026-11-09T00:00:00Z'), now)).toBe(false);
    expect(countsInCurrentWindow('daily', null, now)).toBe(false);
    expect(countsInCurrentWindow(null, null, now)).toBe(true);
  });
});
