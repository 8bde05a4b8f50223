import { RouterFamilies, type RouterFamily } from '@gateway/contracts';
import { BaseEnv, splitList, WithRedisTopology } from '@gateway/platform';
import { WithObjectStoreEnv } from '@gateway/storage';
import { Transform } from 'class-transformer';
import { ArrayNotEmpty, IsIn, IsInt, IsString, Matches, Max, Min } from 'class-validator';

/** 32 bytes in base64 or base64url, padded or not. */
const SEAL_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

/** The object store settings are where generated images are written (the edge serves them). */
export class RouterEnv extends WithObjectStoreEnv(WithRedisTopology(BaseEnv)) {
  /**
   * The endpoint families this replica serves (docs/operations.md, "Endpoint families"): it
   * subscribes only their subjects, so each family can have pods, autoscaling and failures of its own.
   */
  @Transform(({ value }) => splitList(value))
  @ArrayNotEmpty({ message: `ROUTER_FAMILIES must name at least one of ${RouterFamilies.join(', ')}` })
  @IsIn(RouterFamilies, {
    each: true,
    message: ({ value }) =>
      `ROUTER_FAMILIES must be a comma-separated list of ${RouterFamilies.join(', ')}; not ${(value as unknown[])
        .filter((family) => !(RouterFamilies as readonly unknown[]).includes(family))
        .map((family) => `'${String(family)}'`)
        .join(', ')}`,
  })
  ROUTER_FAMILIES: RouterFamily[] = [...RouterFamilies];

  /** The model catalog (YAML). */
  @IsString()
  MODELS_CONFIG = 'config/models.yaml';

  /**
   * Shared route breakers and provider quotas (docs/configuration.md, "Routing"). Empty: every
   * replica keeps its own breakers and quotas are not enforced.
   */
  @Matches(/^(rediss?:\/\/\S+)?$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL (or empty)' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** Attempts per upstream route for connect errors, timeouts, 429 and 5xx, before the next route. */
  @IsInt()
  @Min(1)
  @Max(10)
  UPSTREAM_ATTEMPTS: number = 2;

  @IsInt()
  @Min(0)
  @Max(60_000)
  UPSTREAM_RETRY_BASE_MS: number = 200;

  /**
   * A 429 from the last route a request can use, whose Retry-After is at most this long, is waited
   * out and tried once more within the request; a longer one reaches the client (0: never wait).
   */
  @IsInt()
  @Min(0)
  @Max(60_000)
  UPSTREAM_RETRY_AFTER_MAX_WAIT_MS: number = 2_000;

  /**
   * Max open connections per upstream origin (per HTTP provider adapter, per replica). An HTTP/1.1
   * stream holds its connection for its whole length, so this bounds the concurrent streams one
   * replica can hold to one provider; requests beyond it wait for a free connection.
   */
  @IsInt()
  @Min(1)
  @Max(65_536)
  UPSTREAM_MAX_CONNECTIONS: number = 4096;

  /** Simulator pacing: delay between streamed tokens, for demos and time-to-first-byte tests. */
  @IsInt()
  @Min(0)
  @Max(10_000)
  SIMULATOR_TOKEN_DELAY_MS: number = 0;

  /** Bound on each call to the stored-responses store (account-service) for `previous_response_id`, `item_reference` and `store`. */
  @IsInt()
  @Min(100)
  @Max(60_000)
  STORE_TIMEOUT_MS: number = 5_000;

  /**
   * How often the router tells the edge it is still at a text generation (a `heartbeat` frame); the
   * edge gives up after a few missed ones (INFERENCE_SILENCE_TIMEOUT_MS).
   */
  @IsInt()
  @Min(100)
  @Max(60_000)
  INFERENCE_HEARTBEAT_MS: number = 2_000;

  /**
   * Seals the reasoning of Responses reasoning items (`include: ["reasoning.encrypted_content"]`),
   * which clients send back on later turns: every replica needs the same key, and a new key without
   * the old one in REASONING_SEAL_KEYS turns the reasoning clients hold into 400s. Required, with no
   * default: `npm start` and the test suites generate one (docs/configuration.md).
   */
  @Matches(SEAL_KEY, { message: 'REASONING_SEAL_KEY is required: 32 random bytes in base64 (openssl rand -base64 32)' })
  REASONING_SEAL_KEY: string;

  /** Earlier seal keys (comma-separated, base64): they still open reasoning sealed before a rotation, but seal nothing. */
  @Transform(({ value }) => splitList(value))
  @Matches(SEAL_KEY, { each: true, message: 'REASONING_SEAL_KEYS must be a comma-separated list of 32-byte base64 keys' })
  REASONING_SEAL_KEYS: string[] = [];
}
