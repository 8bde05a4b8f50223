/** Numbers and times as the console shows them; times in the reporting time zone. */
import { DateTime } from 'luxon';

export function formatTime(unixSeconds: number | null | undefined, zone: string): string {
  if (unixSeconds === null || unixSeconds === undefined || unixSeconds < 0) return '—';
  return DateTime.fromSeconds(unixSeconds, { zone }).toFormat('yyyy-LL-dd HH:mm:ss');
}

export function formatCredits(value: number | string | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const number = typeof value === 'string' ? Number(value) : value;
  if (!Number.isFinite(number)) return String(value);
  return number.toLocaleString('en-US', { maximumFractionDigits: 6 });
}

export const formatCount = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : value.toLocaleString('en-US'));

export function expiryText(expiresAt: number, zone: string): string {
  if (expiresAt === -1) return 'never';
  const text = formatTime(expiresAt, zone);
  return expiresAt * 1000 < Date.now() ? `${text} (expired)` : text;
}

/** A key as lists show it: its prefix and last four characters. */
export const maskKey = (key: string): string => `${key.slice(0, key.startsWith('ek-proxy-') ? 9 : 3)}...${key.slice(-4)}`;
