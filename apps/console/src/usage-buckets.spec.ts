import type { UsageSeries } from './api';
import { fillUsageBuckets, localBuckets } from './usage-buckets';

type Series = Parameters<typeof fillUsageBuckets>[0];

/** Unix seconds of a UTC wall time: `utc('2026-03-08T07:00')`. */
const utc = (iso: string): number => Date.parse(`${iso}Z`) / 1000;

const point = (start: number, date: string, group: string, requests: number, credits = '0.5'): UsageSeries['points'][number] => ({
  start,
  date,
  group,
  requests,
  input_tokens: requests * 10,
  output_tokens: requests * 2,
  credits,
});

const gaps = (starts: number[]): number[] => starts.slice(1).map((start, i) => start - starts[i]);

describe('fillUsageBuckets', () => {
  it('fills every day of a week in Asia/Kolkata (UTC+05:30) with zeros, keeping the answer’s points', () => {
    // 1 to 8 March 2026, local midnights: 18:30 UTC the day before.
    const series: Series = {
      timezone: 'Asia/Kolkata',
      bucket: 'day',
      from: utc('2026-02-28T18:30'),
      to: utc('2026-03-07T18:30'),
      groups: [
        { group: 'model-a', label: 'model-a' },
        { group: 'model-b', label: 'model-b' },
      ],
      points: [
        point(utc('2026-03-01T18:30'), '2026-03-02', 'model-b', 3, '1.25'),
        point(utc('2026-03-04T18:30'), '2026-03-05', 'model-a', 7),
        point(utc('2026-03-04T18:30'), '2026-03-05', 'model-b', 1),
      ],
    };

    const buckets = fillUsageBuckets(series);

    expect(buckets.map((bucket) => bucket.date)).toEqual(['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06', '2026-03-07']);
    expect(buckets[0].start).toBe(utc('2026-02-28T18:30'));
    expect(gaps(buckets.map((bucket) => bucket.start))).toEqual(Array(6).fill(86_400));
    // Every bucket has every group, in the answer's order.
    for (const bucket of buckets) expect(bucket.points.map((p) => p.group)).toEqual(['model-a', 'model-b']);
    expect(buckets[0].points).toEqual([
      { start: utc('2026-02-28T18:30'), date: '2026-03-01', group: 'model-a', requests: 0, input_tokens: 0, output_tokens: 0, credits: '0' },
      { start: utc('2026-02-28T18:30'), date: '2026-03-01', group: 'model-b', requests: 0, input_tokens: 0, output_tokens: 0, credits: '0' },
    ]);
    expect(buckets[1].points[0].requests).toBe(0);
    expect(buckets[1].points[1]).toEqual(series.points[0]);
    expect(buckets[4].points.map((p) => p.requests)).toEqual([7, 1]);
    const total = buckets.flatMap((bucket) => bucket.points).reduce((sum, p) => sum + p.requests, 0);
    expect(total).toBe(11);
  });

  describe('America/New_York, the week the clocks change, by hour', () => {
    it('spring forward (8 March 2026): the 23-hour day has no 02:00 bucket', () => {
      // Thursday 5 to Thursday 12 March 2026, local midnights (EST before the change, EDT after).
      const series: Series = {
        timezone: 'America/New_York',
        bucket: 'hour',
        from: utc('2026-03-05T05:00'),
        to: utc('2026-03-12T04:00'),
        groups: [{ group: 'all', label: 'all' }],
        points: [point(utc('2026-03-08T06:00'), '2026-03-08T01:00', 'all', 2), point(utc('2026-03-08T07:00'), '2026-03-08T03:00', 'all', 5)],
      };

      const buckets = fillUsageBuckets(series);

      // 6 days of 24 hours and one of 23: every bucket one elapsed hour after the one before.
      expect(buckets).toHaveLength(6 * 24 + 23);
      expect(gaps(buckets.map((bucket) => bucket.start)).every((gap) => gap === 3600)).toBe(true);
      expect(buckets[0]).toMatchObject({ start: utc('2026-03-05T05:00'), date: '2026-03-05T00:00' });
      expect(buckets.at(-1)).toMatchObject({ start: utc('2026-03-12T03:00'), date: '2026-03-11T23:00' });
      const sunday = buckets.filter((bucket) => bucket.date.startsWith('2026-03-08'));
      expect(sunday).toHaveLength(23);
      expect(sunday.map((bucket) => bucket.date.slice(11, 13))).toEqual(['00', '01', ...Array.from({ length: 21 }, (_, i) => String(i + 3).padStart(2, '0'))]);
      const one = buckets.find((bucket) => bucket.date === '2026-03-08T01:00')!;
      const three = buckets.find((bucket) => bucket.date === '2026-03-08T03:00')!;
      expect([one.start, three.start]).toEqual([utc('2026-03-08T06:00'), utc('2026-03-08T07:00')]);
      expect([one.points[0].requests, three.points[0].requests]).toEqual([2, 5]);
      expect(buckets.reduce((sum, bucket) => sum + bucket.points[0].requests, 0)).toBe(7);
    });

    it('fall back (1 November 2026): the 25-hour day repeats 01:00, which is one bucket as the API groups it', () => {
      // Thursday 29 October to Thursday 5 November 2026, local midnights (EDT before, EST after).
      const series: Series = {
        timezone: 'America/New_York',
        bucket: 'hour',
        from: utc('2026-10-29T04:00'),
        to: utc('2026-11-05T05:00'),
        groups: [{ group: 'all', label: 'all' }],
        points: [
          // The API names the repeated hour once and gives it the later of its two starts (01:00 EST).
          point(utc('2026-11-01T06:00'), '2026-11-01T01:00', 'all', 4),
          point(utc('2026-11-01T07:00'), '2026-11-01T02:00', 'all', 1),
        ],
      };

      const buckets = fillUsageBuckets(series);

      // 169 elapsed hours; the Sunday's 25 make 24 local hours.
      expect((series.to - series.from) / 3600).toBe(169);
      expect(buckets).toHaveLength(168);
      const sunday = buckets.filter((bucket) => bucket.date.startsWith('2026-11-01'));
      expect(sunday.map((bucket) => bucket.date.slice(11, 13))).toEqual(Array.from({ length: 24 }, (_, i) => String(i).padStart(2, '0')));
      const one = buckets.find((bucket) => bucket.date === '2026-11-01T01:00')!;
      const two = buckets.find((bucket) => bucket.date === '2026-11-01T02:00')!;
      // 01:00 starts at 01:00 EDT and lasts two hours, to 02:00 EST.
      expect([one.start, two.start]).toEqual([utc('2026-11-01T05:00'), utc('2026-11-01T07:00')]);
      expect(one.points).toEqual([{ ...series.points[0], start: utc('2026-11-01T05:00') }]);
      expect(two.points[0].requests).toBe(1);
      const hourGaps = gaps(buckets.map((bucket) => bucket.start));
      expect(hourGaps.filter((gap) => gap !== 3600)).toEqual([7200]);
    });

    it('by day, the same weeks have days of 23 and 25 hours (never 86 400 s added)', () => {
      const spring = localBuckets('America/New_York', 'day', utc('2026-03-05T05:00'), utc('2026-03-12T04:00'));
      expect(spring.map((bucket) => bucket.date)).toEqual(['2026-03-05', '2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09', '2026-03-10', '2026-03-11']);
      expect(gaps(spring.map((bucket) => bucket.start)).map((gap) => gap / 3600)).toEqual([24, 24, 24, 23, 24, 24]);
      const fall = localBuckets('America/New_York', 'day', utc('2026-10-29T04:00'), utc('2026-11-05T05:00'));
      expect(fall).toHaveLength(7);
      expect(gaps(fall.map((bucket) => bucket.start)).map((gap) => gap / 3600)).toEqual([24, 24, 24, 25, 24, 24]);
      expect(fall.at(-1)).toEqual({ start: utc('2026-11-04T05:00'), date: '2026-11-04' });
    });
  });

  it('an empty answer gives every bucket of the range with no points', () => {
    const empty: Series = { timezone: 'UTC', bucket: 'hour', from: utc('2026-05-01T00:00'), to: utc('2026-05-02T00:00'), groups: [], points: [] };
    const hours = fillUsageBuckets(empty);
    expect(hours).toHaveLength(24);
    expect(hours[23]).toEqual({ start: utc('2026-05-01T23:00'), date: '2026-05-01T23:00', points: [] });
    expect(hours.every((bucket) => bucket.points.length === 0)).toBe(true);
    expect(fillUsageBuckets({ ...empty, bucket: 'day' })).toEqual([{ start: utc('2026-05-01T00:00'), date: '2026-05-01', points: [] }]);
  });

  it('keeps a point whose bucket falls outside the range walked, rather than dropping it', () => {
    const series: Series = {
      timezone: 'UTC',
      bucket: 'day',
      from: utc('2026-05-01T00:00'),
      to: utc('2026-05-02T00:00'),
      groups: [{ group: 'm', label: 'm' }],
      points: [point(utc('2026-05-02T00:00'), '2026-05-02', 'm', 1)],
    };
    expect(fillUsageBuckets(series).map((bucket) => [bucket.date, bucket.points[0].requests])).toEqual([
      ['2026-05-01', 0],
      ['2026-05-02', 1],
    ]);
  });
});
