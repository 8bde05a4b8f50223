import { randomBytes } from 'node:crypto';
import { decodeEncryptionKey, hashKey, KeyCryptoService } from './key-crypto.service';

describe('KeyCryptoService', () => {
  const crypto = new KeyCryptoService({ KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') });

  it('generates keys with the type prefix and 43 random URL-safe characters', () => {
    const keys = new Set(Array.from({ length: 100 }, () => crypto.generate('proxy')));
    expect(keys.size).toBe(100);
    for (const key of keys) expect(key).toMatch(/^ek-proxy-[A-Za-z0-9_-]{43}$/);
    expect(crypto.generate('master')).toMatch(/^ek-[A-Za-z0-9_-]{43}$/);
    expect(crypto.generate('dev')).toMatch(/^ek-dev-[A-Za-z0-9_-]{43}$/);
  });

  it('round-trips a value through AES-256-GCM with a fresh IV each time', () => {
    const sealed = crypto.encrypt('ek-proxy-secret');
    expect(sealed).not.toContain('secret');
    expect(crypto.encrypt('ek-proxy-secret')).not.toBe(sealed);
    expect(crypto.decrypt(sealed)).toBe('ek-proxy-secret');
  });

  it('refuses a tampered ciphertext or another key', () => {
    const sealed = crypto.encrypt('ek-proxy-secret');
    const parts = sealed.split(':');
    parts[3] = Buffer.from('tampered').toString('base64');
    expect(() => crypto.decrypt(parts.join(':'))).toThrow();
    expect(() => new KeyCryptoService({ KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') }).decrypt(sealed)).toThrow();
  });

  it('hashes with SHA-256 hex and decodes hex or base64 encryption keys', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const raw = randomBytes(32);
    expect(decodeEncryptionKey(raw.toString('hex')).equals(raw)).toBe(true);
    expect(decodeEncryptionKey(raw.toString('base64')).equals(raw)).toBe(true);
    expect(() => decodeEncryptionKey('c2hvcnQ=')).toThrow(/32 bytes/);
  });
});
