import { InvalidEnvironmentError, parseEnv } from '@gateway/platform';
import { EdgeEnv } from './edge.env';

const FILE_URL_SECRET = 's'.repeat(32);

describe('EdgeEnv', () => {
  it('reads numbers and proxy lists from strings', () => {
    const env = parseEnv(EdgeEnv, { FILE_URL_SECRET, PORT: '9090', AUTH_CACHE_TTL_SECONDS: '5', TRUSTED_PROXIES: '10.0.0.0/8, ::1' });
    expect(env.PORT).toBe(9090);
    expect(env.AUTH_CACHE_TTL_SECONDS).toBe(5);
    expect(env.TRUSTED_PROXIES).toBe('10.0.0.0/8, ::1');
    expect(parseEnv(EdgeEnv, { FILE_URL_SECRET, PLAN_RATE_LIMITS: 'free=5:100' }).PLAN_RATE_LIMITS).toBe('free=5:100');
  });

  it('fails naming the variable', () => {
    expect(() => parseEnv(EdgeEnv, { TRUSTED_PROXIES: 'nope' })).toThrow(InvalidEnvironmentError);
    expect(() => parseEnv(EdgeEnv, { TRUSTED_PROXIES: 'nope' })).toThrow(/TRUSTED_PROXIES/);
    expect(() => parseEnv(EdgeEnv, { REDIS_URL: 'http://x' })).toThrow(/REDIS_URL/);
    expect(() => parseEnv(EdgeEnv, { PLAN_RATE_LIMITS: 'gold=1:2' })).toThrow(/PLAN_RATE_LIMITS/);
    expect(() => parseEnv(EdgeEnv, {})).toThrow(/FILE_URL_SECRET is required/);
    expect(() => parseEnv(EdgeEnv, { FILE_URL_SECRET: 'short' })).toThrow(/FILE_URL_SECRET must be at least 32/);
    expect(() => parseEnv(EdgeEnv, { FILE_URL_SECRET, OBJECT_STORE: 's3' })).toThrow(/S3_BUCKET/);
  });

  it('bounds the video heartbeat interval at 15 s', () => {
    expect(parseEnv(EdgeEnv, { FILE_URL_SECRET }).VIDEO_HEARTBEAT_MS).toBe(10_000);
    expect(parseEnv(EdgeEnv, { FILE_URL_SECRET, VIDEO_HEARTBEAT_MS: '500' }).VIDEO_HEARTBEAT_MS).toBe(500);
    expect(() => parseEnv(EdgeEnv, { FILE_URL_SECRET, VIDEO_HEARTBEAT_MS: '15001' })).toThrow(/VIDEO_HEARTBEAT_MS/);
  });
});
