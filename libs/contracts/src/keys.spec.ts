import { classifyKey, maskKey } from './keys';

describe('key formats', () => {
  it('classifies by the longest matching prefix', () => {
    expect(classifyKey('ek-proxy-abc')).toBe('proxy');
    expect(classifyKey('ek-dev-abc')).toBe('dev');
    expect(classifyKey('ek-abc')).toBe('master');
    expect(classifyKey('ek-proxyabc')).toBe('master');
    expect(classifyKey('sk-abc')).toBeNull();
    expect(classifyKey('')).toBeNull();
  });

  it('masks a key to its prefix and last four characters', () => {
    expect(maskKey('ek-proxy-abcdefghijklmnopqrstuvwxyz1234')).toBe('ek-proxy-...1234');
    expect(maskKey('ek-abcdefghijklmnopqrstuvwxyzWXYZ')).toBe('ek-...WXYZ');
    expect(maskKey('ek-dev-short')).toBe('ek-dev-...');
    expect(maskKey('unknown-secret-value-0000')).toBe('...0000');
  });
});
