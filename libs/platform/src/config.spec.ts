import { DatabaseEnv } from './base-env';
import { InvalidEnvironmentError, parseEnv, splitList } from './config';

describe('parseEnv', () => {
  it('applies defaults and converts numbers', () => {
    const env = parseEnv(DatabaseEnv, { HEALTH_PORT: '9100' });
    expect(env.HEALTH_PORT).toBe(9100);
    expect(env.NATS_URL).toBe('nats://127.0.0.1:4222');
    expect(env.DATABASE_URL).toMatch(/^postgresql:\/\//);
  });

  it('treats empty variables as unset', () => {
    expect(parseEnv(DatabaseEnv, { LOG_LEVEL: '' }).LOG_LEVEL).toBe('log');
  });

  it('names every bad variable', () => {
    let error: unknown;
    try {
      parseEnv(DatabaseEnv, { HEALTH_PORT: 'abc', DATABASE_URL: 'mysql://x', NATS_URL: 'http://x' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidEnvironmentError);
    const message = (error as Error).message;
    expect(message).toContain('HEALTH_PORT');
    expect(message).toContain('DATABASE_URL');
    expect(message).toContain('NATS_URL');
  });
});

describe('splitList', () => {
  it('splits and trims comma-separated values', () => {
    expect(splitList(' a, b ,,c ')).toEqual(['a', 'b', 'c']);
    expect(splitList(undefined)).toEqual([]);
  });
});
