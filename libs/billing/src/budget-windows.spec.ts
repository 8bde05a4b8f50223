import { windowBucket, windowResetsAt, windowSpan } from './budget-windows';

const utc = (iso: string) => Date.parse(iso);

describe('budget windows: how time is cut', () => {
  it('counts a rolling charge until its minute bucket ends plus the window length, never earlier', () => {
    const fiveHours = { period: '5h', timezone: 'UTC' };
    const at = utc('2030-01-07T06:00:30Z');
    expect(windowBucket(fiveHours, at)).toEqual({ member: utc('2030-01-07T06:00:00Z'), expiry: utc('2030-01-07T11:01:00Z') });
    // At 11:00:30 the charge (06:00:30) is 5 h old: it must still count (never lenient), and does.
    expect(windowSpan(fiveHours, utc('2030-01-07T11:00:30Z')).from).toBeLessThanOrEqual(at);
    expect(windowSpan(fiveHours, utc('2030-01-07T11:01:00Z')).from).toBeGreaterThan(at);
    expect(windowResetsAt(fiveHours, utc('2030-01-07T08:00:00Z'), at)).toBe(utc('2030-01-07T11:01:00Z'));
    expect(windowResetsAt(fiveHours, utc('2030-01-07T08:00:00Z'), null)).toBeNull();
  });

  it('keeps hour buckets for rolling windows longer than a day', () => {
    const sevenDays = { period: '7d', timezone: 'UTC' };
    expect(windowBucket(sevenDays, utc('2030-01-07T06:59:59Z'))).toEqual({ member: utc('2030-01-07T06:00:00Z'), expiry: utc('2030-01-14T07:00:00Z') });
    expect(windowSpan(sevenDays, utc('2030-01-14T06:30:00Z'))).toEqual({ from: utc('2030-01-07T06:00:00Z'), granularityMs: 3_600_000 });
  });

  it('starts calendar windows at midnight in their zone: Asia/Kolkata (UTC+5:30)', () => {
    const daily = { period: 'daily', timezone: 'Asia/Kolkata' };
    expect(windowBucket(daily, utc('2030-01-07T18:29:59Z'))).toEqual({ member: utc('2030-01-06T18:30:00Z'), expiry: utc('2030-01-07T18:30:00Z') });
    expect(windowSpan(daily, utc('2030-01-07T18:30:00Z')).from).toBe(utc('2030-01-07T18:30:00Z'));
    expect(windowResetsAt(daily, utc('2030-01-07T12:00:00Z'))).toBe(utc('2030-01-07T18:30:00Z'));
  });

  it('handles daylight-saving changes in Europe/Berlin: a 25-hour and a 23-hour day', () => {
    const daily = { period: 'daily', timezone: 'Europe/Berlin' };
    // 25 October 2026: clocks go back at 03:00 CEST, the day runs from 22:00Z to 23:00Z the next day.
    expect(windowBucket(daily, utc('2026-10-25T12:00:00Z'))).toEqual({ member: utc('2026-10-24T22:00:00Z'), expiry: utc('2026-10-25T23:00:00Z') });
    // 29 March 2026: clocks go forward, the day runs from 23:00Z to 22:00Z.
    expect(windowBucket(daily, utc('2026-03-29T12:00:00Z'))).toEqual({ member: utc('2026-03-28T23:00:00Z'), expiry: utc('2026-03-29T22:00:00Z') });
  });

  it('starts weeks on Monday, months on the 1st and quarters on 1 January, April, July and October', () => {
    expect(windowBucket({ period: 'weekly', timezone: 'UTC' }, utc('2030-01-13T23:59:59Z')).member).toBe(utc('2030-01-07T00:00:00Z'));
    expect(windowBucket({ period: 'monthly', timezone: 'America/New_York' }, utc('2030-02-01T04:59:59Z')).member).toBe(utc('2030-01-01T05:00:00Z'));
    expect(windowBucket({ period: 'quarterly', timezone: 'UTC' }, utc('2030-06-30T12:00:00Z'))).toEqual({
      member: utc('2030-04-01T00:00:00Z'),
      expiry: utc('2030-07-01T00:00:00Z'),
    });
  });
});
