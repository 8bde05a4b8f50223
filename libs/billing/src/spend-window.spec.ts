import { countsInCurrentWindow, spendWindowId, windowStart } from './spend-window';

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
