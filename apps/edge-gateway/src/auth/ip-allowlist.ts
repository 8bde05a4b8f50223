import * as ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** A parsed `ip_whitelist`: IPv4 and IPv6 addresses and CIDR blocks; IPv4-mapped IPv6 is read as IPv4. */
export class IpAllowlist {
  private readonly ranges: Range[];

  constructor(entries: string[]) {
    this.ranges = entries.flatMap((entry): Range[] => {
      try {
        if (entry.includes('/')) return [ipaddr.parseCIDR(entry)];
        const address = ipaddr.process(entry);
        return [[address, address.kind() === 'ipv4' ? 32 : 128]];
      } catch {
        return [];
      }
    });
  }

  get isEmpty(): boolean {
    return this.ranges.length === 0;
  }

  allows(ip: string): boolean {
    let address: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      address = ipaddr.process(ip);
    } catch {
      return false;
    }
    return this.ranges.some(([range, bits]) => {
      if (range.kind() === address.kind()) return address.match(range, bits);
      // An IPv4 block also admits the same address written as IPv4-mapped IPv6, and the reverse.
      if (range.kind() === 'ipv6' && address.kind() === 'ipv4') {
        return (address as ipaddr.IPv4).toIPv4MappedAddress().match(range as ipaddr.IPv6, bits);
      }
      return false;
    });
  }
}

/** Addresses already normalized: parsing one costs more than the rest of a request's caller context. */
const normalized = new Map<string, string>();
const NORMALIZED_MAX = 4096;

/** The caller address as logs show it: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) written as IPv4. */
export function normalizeIp(ip: string): string {
  let result = normalized.get(ip);
  if (result === undefined) {
    try {
      result = ipaddr.process(ip).toString();
    } catch {
      result = ip;
    }
    // Bounded: a flood of distinct addresses starts the memo over rather than growing it.
    if (normalized.size >= NORMALIZED_MAX) normalized.clear();
    normalized.set(ip, result);
  }
  return result;
}
