/** Key formats. Classification uses the longest matching prefix: `ek-proxy-` and `ek-dev-` before `ek-`. */
export const KeyPrefixes = {
  proxy: 'ek-proxy-',
  dev: 'ek-dev-',
  master: 'ek-',
} as const;

export type KeyType = keyof typeof KeyPrefixes;

const byLongestPrefix = (Object.entries(KeyPrefixes) as [KeyType, string][]).sort((a, b) => b[1].length - a[1].length);

export function classifyKey(value: string): KeyType | null {
  for (const [type, prefix] of byLongestPrefix) {
    if (value.startsWith(prefix)) return type;
  }
  return null;
}

/** What may be shown of a key anywhere (logs, errors, request logs): its prefix and last 4 characters. */
export function maskKey(value: string): string {
  const type = classifyKey(value);
  const prefix = type ? KeyPrefixes[type] : '';
  const tail = value.length - prefix.length > 8 ? value.slice(-4) : '';
  return `${prefix}...${tail}`;
}

export const Plans = ['free', 'basic', 'standard', 'pro', 'enterprise'] as const;
export type Plan = (typeof Plans)[number];

export const SpendWindows = ['daily', 'weekly', 'monthly'] as const;
export type SpendWindow = (typeof SpendWindows)[number];

/** Models whose id ends in this suffix form the coding plan, served to DevPass keys only. */
export const DEV_MODEL_SUFFIX = ':dev';
