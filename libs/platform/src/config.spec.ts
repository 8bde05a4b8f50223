import { DatabaseEnv, MigrationEnv, sessionDatabaseUrl } from './base-env';
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

describe('MigrationEnv', () => {
  const pooled = 'postgresql://gateway:pw@pgbouncer:6432/gateway';
  const direct = 'postgresql://gateway:pw@postgres:5432/gateway';

  it('migrates through DATABASE_DIRECT_URL when it is set, else DATABASE_URL', () => {
    expect(sessionDatabaseUrl(parseEnv(MigrationEnv, { DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct }))).toBe(direct);
    expect(sessionDatabaseUrl(parseEnv(MigrationEnv, { DATABASE_URL: direct }))).toBe(direct);
    expect(sessionDatabaseUrl(parseEnv(MigrationEnv, { DATABASE_URL: direct, DATABASE_DIRECT_URL: '' }))).toBe(direct);
  });

  it('requires DATABASE_URL and names a direct URL that is not a postgresql:// URL', () => {
    expect(() => parseEnv(MigrationEnv, {})).toThrow(/DATABASE_URL is required/);
    expect(() => parseEnv(MigrationEnv, { DATABASE_URL: pooled, DATABASE_DIRECT_URL: 'mysql://x' })).toThrow(
      /DATABASE_DIRECT_URL must be a postgresql:\/\/ URL/,
    );
  });
});

describe('splitList', () => {
  it('splits and trims comma-separated values', () => {
    expect(splitList(' a, b ,,c ')).toEqual(['a', 'b', 'c']);
    expect(splitList(undefined)).toEqual([]);
  });
});
