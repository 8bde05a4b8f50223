import { windowStart } from './spend-window';

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
