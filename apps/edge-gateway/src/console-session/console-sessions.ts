import { Inject, Injectable } from '@nestjs/common';
import { KeyType, maskKey } from '@gateway/contracts';
import { RedisConnection } from '@gateway/platform';
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { EdgeEnv } from '../config/edge.env';
import { AuthCacheService } from '../auth/auth-cache.service';

/** What the browser holds: the cookie's value (the session token) and, in memory only, the CSRF token. */
export interface IssuedSession {
  token: string;
  view: SessionView;
}

/** What `GET /console/api/session` shows; never the key. */
export interface SessionView {
  key_type: KeyType;
  /** The signed-in key, masked (`ek-proxy-...1234`). */
  key: string;
  csrf_token: string;
  /** Unix seconds: the session ends then whatever its use (absolute expiry). */
  expires_at: number;
  /** Seconds without a call after which the session ends (idle expiry). */
  idle_expires_in: number;
}

/** A session found for a request: the key it stands for, and what to end or move it by. */
export interface ResolvedSession {
  id: string;
  key: string;
  keyHash: string;
}

interface StoredSession {
  /** The key, AES-256-GCM under a key derived from the session token (Redis alone cannot recover it). */
  sealed: string;
  keyHash: string;
  keyType: KeyType;
  masked: string;
  csrfHash: string;
  /** The CSRF token sealed like the key, so a reload can be told it again. */
  csrfSealed: string;
  expiresAt: number;
}

const sessionKey = (id: string) => `console:session:${id}`;
const keySessionsKey = (keyHash: string) => `console:key-sessions:${keyHash}`;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Two values derived from the token: the session's id in Redis and the key that seals its secrets. */
function derive(token: string): { id: string; sealKey: Buffer } {
  const material = Buffer.from(token, 'utf8');
  return {
    id: Buffer.from(hkdfSync('sha256', material, 'console-session', 'id', 32)).toString('hex'),
    sealKey: Buffer.from(hkdfSync('sha256', material, 'console-session', 'seal', 32)),
  };
}

function seal(sealKey: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function unseal(sealKey: Buffer, sealed: string): string | null {
  try {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', sealKey, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/**
 * Console sessions, in Redis so every edge replica shares them. A session is created from a key
 * (sign-in) and stands for it: every call made with the session's cookie is authenticated with that
 * key by the normal path, so revocation, scope and budgets apply unchanged. What Redis holds is
 * keyed by a hash of the cookie's token and the key is sealed under another value derived from it:
 * neither the store nor its backups give the key away without the browser's cookie.
 *
 * A session ends on logout, after `CONSOLE_SESSION_IDLE_SECONDS` without a call, at
 * `CONSOLE_SESSION_MAX_SECONDS` after sign-in, and when its key is regenerated, switched off or
 * removed (`endKey`, indexed by the key's SHA-256 as key-change events name keys).
 */
@Injectable()
export class ConsoleSessions {
  private readonly idleMs: number;
  private readonly maxMs: number;

  constructor(
    private readonly redis: RedisConnection,
    @Inject(EdgeEnv) env: Pick<EdgeEnv, 'CONSOLE_SESSION_IDLE_SECONDS' | 'CONSOLE_SESSION_MAX_SECONDS'>,
  ) {
    this.idleMs = env.CONSOLE_SESSION_IDLE_SECONDS * 1000;
    this.maxMs = env.CONSOLE_SESSION_MAX_SECONDS * 1000;
  }

  async create(key: string, keyType: KeyType): Promise<IssuedSession> {
    const token = randomBytes(32).toString('base64url');
    const csrf = randomBytes(24).toString('base64url');
    const { id, sealKey } = derive(token);
    const keyHash = AuthCacheService.hash(key);
    const stored: StoredSession = {
      sealed: seal(sealKey, key),
      keyHash,
      keyType,
      masked: maskKey(key),
      csrfHash: sha256(csrf),
      csrfSealed: seal(sealKey, csrf),
      expiresAt: Date.now() + this.maxMs,
    };
    await this.redis.client.set(sessionKey(id), JSON.stringify(stored), 'PX', Math.min(this.idleMs, this.maxMs));
    await this.index(keyHash, id);
    return { token, view: this.view(stored, csrf) };
  }

  /** The session's public view (with its CSRF token), or null when it ended. Counts as use. */
  async describe(token: string): Promise<SessionView | null> {
    const found = await this.load(token);
    if (!found) return null;
    const csrf = unseal(found.sealKey, found.stored.csrfSealed);
    return csrf === null ? null : this.view(found.stored, csrf);
  }

  /**
   * The key a call made with this session stands for, when the session is alive and `csrf` is its
   * CSRF token; 'csrf' when the session is alive but the token is missing or wrong.
   */
  async resolve(token: string, csrf: string | undefined): Promise<ResolvedSession | 'csrf' | null> {
    const found = await this.load(token);
    if (!found) return null;
    if (!csrf || !sameHash(sha256(csrf), found.stored.csrfHash)) return 'csrf';
    const key = unseal(found.sealKey, found.stored.sealed);
    return key === null ? null : { id: found.id, key, keyHash: found.stored.keyHash };
  }

  /** The session now stands for `key` (its key was regenerated through it); its other sessions are the caller's to end. */
  async rekey(token: string, key: string): Promise<void> {
    const found = await this.load(token);
    if (!found) return;
    const keyHash = AuthCacheService.hash(key);
    const stored: StoredSession = { ...found.stored, sealed: seal(found.sealKey, key), keyHash, masked: maskKey(key) };
    await this.redis.client.srem(keySessionsKey(found.stored.keyHash), found.id);
    await this.redis.client.set(sessionKey(found.id), JSON.stringify(stored), 'PX', this.ttl(stored));
    await this.index(keyHash, found.id);
  }

  async end(token: string): Promise<void> {
    await this.endById(derive(token).id);
  }

  async endById(id: string): Promise<void> {
    await this.redis.client.del(sessionKey(id));
  }

  /** Ends every session of the key with this SHA-256 (regenerated, switched off, removed). */
  async endKey(keyHash: string): Promise<void> {
    const members = await this.redis.client.smembers(keySessionsKey(keyHash));
    for (const id of members) await this.redis.client.del(sessionKey(id));
    await this.redis.client.del(keySessionsKey(keyHash));
  }

  private async load(token: string): Promise<{ id: string; sealKey: Buffer; stored: StoredSession } | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const { id, sealKey } = derive(token);
    // Each use pushes the idle expiry back, in the same round trip as the read.
    const raw = await this.redis.client.getex(sessionKey(id), 'PX', this.idleMs);
    if (!raw) return null;
    const stored = JSON.parse(raw) as StoredSession;
    const ttl = this.ttl(stored);
    if (ttl <= 0) {
      await this.endById(id);
      return null;
    }
    // Never past the absolute expiry (only in the session's last idle period does it come first).
    if (ttl < this.idleMs) await this.redis.client.pexpire(sessionKey(id), ttl);
    return { id, sealKey, stored };
  }

  private ttl(stored: StoredSession): number {
    return Math.min(this.idleMs, stored.expiresAt - Date.now());
  }

  private async index(keyHash: string, id: string): Promise<void> {
    await this.redis.client.sadd(keySessionsKey(keyHash), id);
    // The index outlives every session in it; ended sessions left in it cost one DEL when the key ends.
    await this.redis.client.pexpire(keySessionsKey(keyHash), this.maxMs);
  }

  private view(stored: StoredSession, csrf: string): SessionView {
    return {
      key_type: stored.keyType,
      key: stored.masked,
      csrf_token: csrf,
      expires_at: Math.floor(stored.expiresAt / 1000),
      idle_expires_in: Math.floor(this.idleMs / 1000),
    };
  }
}
