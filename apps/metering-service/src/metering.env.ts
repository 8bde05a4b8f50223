import { IsDevPassWindows } from '@gateway/contracts';
import { DatabaseEnv, WithRedisTopology } from '@gateway/platform';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';

export class MeteringEnv extends WithRedisTopology(DatabaseEnv) {
  /** The model catalog, for prices (the same file the router serves). */
  @IsString()
  MODELS_CONFIG = 'config/models.yaml';

  /** The edge's budget store: settled reservations are released and cached balances moved here. */
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** How long a delivered usage event may stay unacknowledged before JetStream redelivers it (a crashed replica's). */
  @IsInt()
  @Min(1000)
  @Max(600_000)
  METERING_ACK_WAIT_MS: number = 10_000;

  /**
   * Token windows per plan for DevPass keys (`plan=period:tokens|…`, `plan=none`); plans left out
   * keep the defaults (docs/configuration.md, Plans). The same value on key-service (which
   * enforces them through the edge and reports them) and metering-service (which counts usage into them).
   */
  @IsDevPassWindows()
  DEVPASS_TOKEN_WINDOWS = '';

  /**
   * How long a batch smaller than the largest (256 events) waits for more before it is written: at
   * low rates it turns one ledger statement per event into one per few events. 0 writes at once.
   */
  @IsInt()
  @Min(0)
  @Max(1000)
  METERING_BATCH_LINGER_MS: number = 20;

  /**
   * Deliveries of a usage event that failed for a reason other than a database outage before it is
   * set aside in the USAGE_DEAD stream. An event that can never be recorded goes there at once.
   */
  @IsInt()
  @Min(1)
  @Max(100)
  METERING_MAX_DELIVERIES: number = 5;
}
