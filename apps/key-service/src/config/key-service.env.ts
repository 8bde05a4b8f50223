import { ALLOCATION_CEILING, IsDevPassWindows, Plan, Plans } from '@gateway/contracts';
import { DatabaseEnv } from '@gateway/platform';
import { IsDefined, IsOptional, Matches, ValidateBy } from 'class-validator';

const DEFAULT_DAILY_LIMITS = 'free=10,basic=50,standard=250,pro=1000,enterprise=10000';
const PLAN_AMOUNTS = new RegExp(`^(${Plans.join('|')})=\\d+(\\.\\d+)?(,(${Plans.join('|')})=\\d+(\\.\\d+)?)*$`);

/** Allocations are bounded by the daily limit alone, so a limit must fit the allocation column. */
const withinAllocationCeiling = (value: unknown): boolean =>
  typeof value !== 'string' || value.split(',').every((pair) => Number(pair.split('=')[1]) <= ALLOCATION_CEILING);

export class KeyServiceEnv extends DatabaseEnv {
  /** 32 bytes, as 64 hex characters or base64: encrypts proxy-key values at rest (AES-256-GCM). */
  @IsDefined({ message: 'KEY_ENCRYPTION_KEY is required (32 bytes as 64 hex characters or base64)' })
  @Matches(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, {
    message: 'KEY_ENCRYPTION_KEY must be 32 bytes as 64 hex characters or base64',
  })
  KEY_ENCRYPTION_KEY: string;

  /** Largest `allocated_ammount` a proxy key may have, per plan: `free=10,basic=50,...`. */
  @IsOptional()
  @Matches(PLAN_AMOUNTS, { message: 'PLAN_DAILY_LIMITS must look like free=10,basic=50,standard=250' })
  @ValidateBy(
    { name: 'withinAllocationCeiling', validator: { validate: withinAllocationCeiling } },
    { message: `PLAN_DAILY_LIMITS: a daily limit may not exceed ${ALLOCATION_CEILING}` },
  )
  PLAN_DAILY_LIMITS = DEFAULT_DAILY_LIMITS;

  /**
   * Token windows per plan for DevPass keys (`plan=period:tokens|…`, `plan=none`); plans left out
   * keep the defaults (docs/configuration.md, Plans). The same value on key-service (which
   * enforces them through the edge and reports them) and metering-service (which counts usage into them).
   */
  @IsDevPassWindows()
  DEVPASS_TOKEN_WINDOWS = '';
}

export function parsePlanAmounts(value: string): Record<Plan, string> {
  const result = Object.fromEntries(DEFAULT_DAILY_LIMITS.split(',').map((pair) => pair.split('=') as [Plan, string])) as Record<Plan, string>;
  for (const pair of value.split(',')) {
    const [plan, amount] = pair.split('=') as [Plan, string];
    result[plan] = amount;
  }
  return result;
}

export const KEY_SERVICE_ENV = Symbol('KEY_SERVICE_ENV');
