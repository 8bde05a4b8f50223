/** The reporting time zone: an IANA name, kept in localStorage (not a secret), the browser's by default. */
import { useSyncExternalStore } from 'react';

const STORAGE_KEY = 'console.timezone';
const listeners = new Set<() => void>();

export const browserTimeZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** An IANA name the browser knows; an offset such as `+05:30` (newer browsers take it) is not one, and the API refuses it. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return /^[A-Za-z]/.test(zone);
  } catch {
    return false;
  }
}

export function reportingTimeZone(): string {
  const stored = localStorage.getItem(STORAGE_KEY);
  return stored && isTimeZone(stored) ? stored : browserTimeZone();
}

export function setReportingTimeZone(zone: string | null): void {
  if (zone === null) localStorage.removeItem(STORAGE_KEY);
  else localStorage.setItem(STORAGE_KEY, zone);
  for (const listener of listeners) listener();
}

export function useTimeZone(): string {
  return useSyncExternalStore((listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, reportingTimeZone);
}

/** Every IANA zone the browser knows, for the settings list. */
export function timeZones(): string[] {
  const supported = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  return [...new Set(['UTC', ...supported])];
}
