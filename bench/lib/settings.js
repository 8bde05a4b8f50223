'use strict';
/**
 * The bench scripts' knobs (environment variables) and the names of the files they write, read the
 * same way by `npm run bench` (run.js) and `npm run bench:floor` (floor.js).
 */

/** An integer from min to max; unset or empty is `fallback`. */
function boundedInt(name, fallback, min, max) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

/** A comma-separated list of integers from min to max; empty or `0` is an empty list. */
function boundedList(name, fallback, min, max) {
  const raw = process.env[name] ?? fallback;
  if (raw.trim() === '' || raw.trim() === '0') return [];
  return raw.split(',').map((part) => {
    const value = Number(part.trim());
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must list integers from ${min} to ${max} (or be 0 to skip)`);
    return value;
  });
}

/** A result file's time: ISO 8601 basic, e.g. 20260122T031500Z. */
function resultStamp(date) {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

module.exports = { boundedInt, boundedList, resultStamp };
