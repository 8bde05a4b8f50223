import { IpAllowlist, normalizeIp } from './ip-allowlist';

describe('IpAllowlist', () => {
  it('matches exact IPv4 and IPv6 addresses', () => {
    const list = new IpAllowlist(['192.0.2.10', '2001:db8::1']);
    expect(list.allows('192.0.2.10')).toBe(true);
    expect(list.allows('192.0.2.11')).toBe(false);
    expect(list.allows('2001:db8:0:0:0:0:0:1')).toBe(true);
    expect(list.allows('2001:db8::2')).toBe(false);
  });

  it('matches CIDR blocks of both families', () => {
    const list = new IpAllowlist(['10.0.0.0/8', '2001:db8::/32']);
    expect(list.allows('10.255.1.2')).toBe(true);
    expect(list.allows('11.0.0.1')).toBe(false);
    expect(list.allows('2001:db8:ffff::1')).toBe(true);
    expect(list.allows('2001:db9::1')).toBe(false);
  });

  it('reads IPv4-mapped IPv6 callers as IPv4, and IPv4 callers against mapped entries', () => {
    expect(new IpAllowlist(['127.0.0.0/8']).allows('::ffff:127.0.0.1')).toBe(true);
    expect(new IpAllowlist(['::ffff:127.0.0.1']).allows('127.0.0.1')).toBe(true);
    expect(new IpAllowlist(['::ffff:0:0/96']).allows('203.0.113.9')).toBe(true);
  });

  it('never matches an unparsable caller, and is empty when given nothing usable', () => {
    expect(new IpAllowlist(['0.0.0.0/0']).allows('not-an-ip')).toBe(false);
    expect(new IpAllowlist([]).isEmpty).toBe(true);
    expect(new IpAllowlist(['garbage']).isEmpty).toBe(true);
  });
});

describe('normalizeIp', () => {
  it('writes IPv4-mapped IPv6 as IPv4 and keeps other addresses', () => {
    expect(normalizeIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeIp('::1')).toBe('::1');
    expect(normalizeIp('203.0.113.9')).toBe('203.0.113.9');
    expect(normalizeIp('garbage')).toBe('garbage');
  });
});
