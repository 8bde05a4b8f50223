import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureCheck = 'valid' | 'expired' | 'invalid';

function sign(secret: string, key: string, expires: number): string {
  return createHmac('sha256', secret).update(`${key}\n${expires}`).digest('base64url');
}

/**
 * URLs of stored objects, served by the edge at `<base>/files/<key>`. A public object's URL is plain;
 * a private one carries `expires` (Unix seconds) and an HMAC-SHA256 `signature` over key and expiry.
 */
export class FileUrls {
  constructor(
    /** The edge's public base URL, ending in `/v1`. */
    private readonly baseUrl: string,
    private readonly secret: string,
    private readonly ttlSeconds: number,
  ) {}

  urlFor(key: string, isPublic: boolean, now = Date.now()): string {
    const plain = `${this.baseUrl.replace(/\/+$/, '')}/files/${key}`;
    if (isPublic) return plain;
    const expires = Math.floor(now / 1000) + this.ttlSeconds;
    return `${plain}?expires=${expires}&signature=${sign(this.secret, key, expires)}`;
  }

  check(key: string, expires: unknown, signature: unknown, now = Date.now()): SignatureCheck {
    if (typeof expires !== 'string' || typeof signature !== 'string' || !/^\d{1,12}$/.test(expires)) return 'invalid';
    const expected = Buffer.from(sign(this.secret, key, Number(expires)));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'valid';
  }
}
