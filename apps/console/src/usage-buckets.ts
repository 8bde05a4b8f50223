/**
 * The usage chart's buckets: `GET /v1/user/usage` answers only the buckets that had usage; the chart
 * needs every local hour or day of the range, the empty ones as zeros. Pure (no React, no fetch) so
 * that it is unit tested.
 */
import { DateTime } from 'luxon';
import type { UsageSeries } from './api';

export type UsagePoint = UsageSeries['points'][number];

export interface UsageBucket {
  /** Unix seconds: the first instant of the local hour or day. */
  start: number;
  /** The local bucket as the API names it: `YYYY-MM-DD` or `YYYY-MM-DDTHH:00`. */
  date: string;
  /** One point per group of the answer (zeros where it had none), in the answer's group order. */
  points: UsagePoint[];
}

/** The API's name of a local bucket (ISO digits whatever the browser's locale). */
const bucketName = (at: DateTime, bucket: 'hour' | 'day'): string =>
  bucket === 'day' ? at.toISODate()! : `${at.toISODate()}T${String(at.hour).padStart(2, '0')}:00`;

/**
 * Every local bucket of [from, to) in the series' time zone, walked with the zone's rules: a day is
 * 23 or 25 hours when the clocks change, and hours are stepped as elapsed time, then named by the
 * local wall clock. Buckets are keyed by that name, as the API groups them (local `date_trunc`), so
 * the hour the clocks skip has no bucket and the hour they repeat is one bucket of two hours (a
 * 25-hour day has 24 hour buckets, its 01:00 twice as long): the API's point for it lands there.
 */
export function localBuckets(zone: string, bucket: 'hour' | 'day', from: number, to: number): { start: number; date: string }[] {
  const buckets: { start: number; date: string }[] = [];
  let cursor = DateTime.fromSeconds(from, { zone }).startOf(bucket);
  if (!cursor.isValid) throw new Error(`not a time zone: ${zone}`);
  while (cursor.toSeconds() < to) {
    const date = bucketName(cursor, bucket);
    if (buckets.at(-1)?.date !== date) buckets.push({ start: Math.floor(cursor.toSeconds()), date });
    // Calendar days for days (local midnight to local midnight); elapsed hours for hours.
    const next = (bucket === 'day' ? cursor.plus({ days: 1 }) : cursor.plus({ hours: 1 })).startOf(bucket);
    // Where the start of an hour does not exist (a 30-minute change), startOf can land back on it.
    cursor = next > cursor ? next : cursor.plus({ hours: 1 });
  }
  return buckets;
}

const zero = (group: string, start: number, date: string): UsagePoint => ({
  start,
  date,
  group,
  requests: 0,
  input_tokens: 0,
  output_tokens: 0,
  credits: '0',
});

/**
 * The series' points in every local bucket of its range, zeros where the answer has none. Groups are
 * the answer's `groups`, then any other its points name. A point whose bucket the walk does not
 * produce is kept in a bucket of its own, so no usage is ever dropped.
 */
export function fillUsageBuckets(series: Pick<UsageSeries, 'timezone' | 'bucket' | 'from' | 'to' | 'groups' | 'points'>): UsageBucket[] {
  const groups = [...new Set([...series.groups.map(({ group }) => group), ...series.points.map(({ group }) => group)])];
  const byDate = new Map<string, UsageBucket>();
  for (const { start, date } of localBuckets(series.timezone, series.bucket, series.from, series.to)) {
    byDate.set(date, { start, date, points: groups.map((group) => zero(group, start, date)) });
  }
  for (const point of series.points) {
    let bucket = byDate.get(point.date);
    if (!bucket) {
      bucket = { start: point.start, date: point.date, points: groups.map((group) => zero(group, point.start, point.date)) };
      byDate.set(point.date, bucket);
    }
    bucket.points[groups.indexOf(point.group)] = { ...point, start: bucket.start };
  }
  return [...byDate.values()].sort((a, b) => a.start - b.start);
}
