import 'reflect-metadata';
import { IsDefined, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

const POSTGRES_URL = /^postgres(ql)?:\/\/\S+$/;

/**
 * Variables every service reads. Numeric fields carry explicit type annotations: the string-to-number
 * conversion of parseEnv reads them from the emitted type metadata.
 */
export class BaseEnv {
  @IsString()
  @Matches(/^(nats|tls|wss?):\/\/\S+(,(nats|tls|wss?):\/\/\S+)*$/, {
    message: 'NATS_URL must be one or more nats:// URLs separated by commas',
  })
  NATS_URL = 'nats://127.0.0.1:4222';

  @IsIn(['fatal', 'error', 'warn', 'log', 'debug', 'verbose'])
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose' = 'log';

  /** Port of the health server (`/healthz`, `/readyz`); the edge serves these on its API port. */
  @IsInt()
  @Min(0)
  @Max(65535)
  HEALTH_PORT: number = 0;

  /**
   * On SIGTERM, how long in-flight requests, streams and jobs may take to finish before the process
   * closes anyway. Below Kubernetes' default terminationGracePeriodSeconds (30 s).
   */
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  SHUTDOWN_GRACE_MS: number = 25_000;
}

export class DatabaseEnv extends BaseEnv {
  @Matches(POSTGRES_URL, { message: 'DATABASE_URL must be a postgresql:// URL' })
  DATABASE_URL = 'postgresql://postgres:postgres@127.0.0.1:5432/gateway';
}

/**
 * What the migration runner reads (the `migrate` Job, `npm run migrate`, `npm start`). It holds
 * PostgreSQL's advisory lock across the whole run, a session-level lock that a pooler in transaction
 * mode would leave on whichever server connection took it; so behind PgBouncer it connects to
 * DATABASE_DIRECT_URL, the database itself.
 */
export class MigrationEnv {
  @IsDefined({ message: 'DATABASE_URL is required' })
  @Matches(POSTGRES_URL, { message: 'DATABASE_URL must be a postgresql:// URL' })
  DATABASE_URL: string;

  @IsOptional()
  @Matches(POSTGRES_URL, { message: 'DATABASE_DIRECT_URL must be a postgresql:// URL' })
  DATABASE_DIRECT_URL?: string;
}

/** A connection that keeps its session from one statement to the next: the direct URL when there is one. */
export const sessionDatabaseUrl = (env: { DATABASE_URL: string; DATABASE_DIRECT_URL?: string }): string => env.DATABASE_DIRECT_URL || env.DATABASE_URL;
