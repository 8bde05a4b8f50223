import { parseEnv } from '@gateway/platform';
import { KeyServiceEnv, parsePlanAmounts } from './key-service.env';

describe('KeyServiceEnv', () => {
  it('requires the encryption key, naming it', () => {
    expect(() => parseEnv(KeyServiceEnv, {})).toThrow(/KEY_ENCRYPTION_KEY/);
    expect(() => parseEnv(KeyServiceEnv, { KEY_ENCRYPTION_KEY: 'short' })).toThrow(/KEY_ENCRYPTION_KEY/);
    expect(parseEnv(KeyServiceEnv, { KEY_ENCRYPTION_KEY: 'a'.repeat(64) }).KEY_ENCRYPTION_KEY).toBe('a'.repeat(64));
  });

  it('reads per-plan daily limits over the documented defaults', () => {
    expect(parsePlanAmounts('pro=2000,free=1.5')).toEqual({
      free: '1.5',
      basic: '50',
      standard: '250',
      pro: '2000',
      enterprise: '10000',
    });
    expect(() => parseEnv(KeyServiceEnv, { KEY_ENCRYPTION_KEY: 'a'.repeat(64), PLAN_DAILY_LIMITS: 'gold=5' })).toThrow(/PLAN_DAILY_LIMITS/);
  });

  it('refuses a daily limit an allocation column could not hold, naming the variable', () => {
    const env = (limits: string) => ({ KEY_ENCRYPTION_KEY: 'a'.repeat(64), PLAN_DAILY_LIMITS: limits });
    expect(parseEnv(KeyServiceEnv, env('enterprise=1000000000')).PLAN_DAILY_LIMITS).toBe('enterprise=1000000000');
    expect(() => parseEnv(KeyServiceEnv, env('pro=5,enterprise=1000000000.01'))).toThrow(/PLAN_DAILY_LIMITS: a daily limit may not exceed 1000000000/);
  });
});
