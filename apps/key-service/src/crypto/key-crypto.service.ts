import { Inject, Injectable } from '@nestjs/common';
import { KeyPrefixes, KeyType } from '@gateway/contracts';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { KeyServiceEnv } from '../config/key-service.env';

export function decodeEncryptionKey(value: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error('KEY_ENCRYPTION_KEY must decode to 32 bytes');
  return key;
}

export const hashKey = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Key generation, lookup hashes and at-rest encryption of proxy-key values. */
@Injectable()
export class KeyCryptoService {
  private readonly encryptionKey: Buffer;

  constructor(@Inject(KeyServiceEnv) env: Pick<KeyServiceEnv, 'KEY_ENCRYPTION_KEY'>) {
    this.encryptionKey = decodeEncryptionKey(env.KEY_ENCRYPTION_KEY);
  }

  /** The prefix and 43 base64url characters: 256 bits from the CSPRNG. */
  generate(type: KeyType): string {
    return KeyPrefixes[type] + randomBytes(32).toString('base64url');
  }

  hash(value: string): string {
    return hashKey(value);
  }

  encrypt(value: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join(':');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split(':');
    if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('unknown ciphertext format');
    const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
  }
}
