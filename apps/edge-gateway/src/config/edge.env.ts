import { BaseEnv, IpOrCidrList, WithRedisTopology } from '@gateway/platform';
import { WithObjectStoreEnv } from '@gateway/storage';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength, Validate } from 'class-validator';

export class EdgeEnv extends WithObjectStoreEnv(WithRedisTopology(BaseEnv)) {
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT: number = 8080;

  /** `::` listens on IPv6 and IPv4 alike. */
  @IsString()
  HOST = '::';

  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** Proxies whose `X-Forwarded-For` is believed: comma-separated IPs or CIDRs. Empty: none. */
  @IsOptional()
  @Validate(IpOrCidrList, { message: 'TRUSTED_PROXIES must be comma-separated IP addresses or CIDR blocks' })
  TRUSTED_PROXIES = '';

  /** Upper bound on how long a cached authentication lives if a key-change event is lost. */
  @IsInt()
  @Min(1)
  @Max(3600)
  AUTH_CACHE_TTL_SECONDS: number = 30;

  @IsInt()
  @Min(100)
  AUTH_CACHE_MAX_ENTRIES: number = 100_000;

  /** How often `last_used` updates are sent to key-service, batched. */
  @IsInt()
  @Min(100)
  @Max(60_000)
  KEY_USAGE_FLUSH_MS: number = 5000;

  @IsInt()
  @Min(100)
  @Max(120_000)
  NATS_REQUEST_TIMEOUT_MS: number = 5000;

  /**
   * Longest silence allowed from the router during a text generation (between stream frames, or
   * before a whole reply): a router that died mid-request turns into a 504 or a closed stream.
   */
  @IsInt()
  @Min(1000)
  INFERENCE_IDLE_TIMEOUT_MS: number = 660_000;

  /**
   * Longest the router may stay silent, heartbeats included (it sends one every
   * INFERENCE_HEARTBEAT_MS, 2 s): past it the router is taken for dead, the stream ends with an
   * error event and the tokens already relayed are billed from the edge.
   */
  @IsInt()
  @Min(500)
  INFERENCE_SILENCE_TIMEOUT_MS: number = 6_000;

  /**
   * Most bytes of a started answer (stream events, audio) that may wait at the edge for a client
   * that does not read them: past it the client is cut off (as if it had disconnected: the upstream
   * call stops, billed for what it used). Bounds memory per open stream.
   */
  @IsInt()
  @Min(65_536)
  STREAM_CLIENT_BACKLOG_BYTES: number = 16 * 1024 * 1024;

  /** The built web console (`npm run build`), served under /console; relative to the working directory. */
  @IsString()
  CONSOLE_DIR = 'dist/apps/console';

  /** The model catalog, for prices and output caps when reserving a request's worst-case cost. */
  @IsString()
  MODELS_CONFIG = 'config/models.yaml';

  /** Requests and tokens per minute by plan: `free=20:40000,basic=60:150000,...` (any subset). */
  @IsOptional()
  @Matches(/^(free|basic|standard|pro|enterprise)=\d+:\d+(,(free|basic|standard|pro|enterprise)=\d+:\d+)*$/, {
    message: 'PLAN_RATE_LIMITS must look like free=20:40000,pro=1000:5000000 (requests:tokens per minute)',
  })
  PLAN_RATE_LIMITS?: string;

  /**
   * Tests only: lets `PUT /v1/_test/clock` move the clock budget windows are read at (see
   * BudgetClock). Refused at startup with NODE_ENV=production.
   */
  @IsIn(['true', 'false'], { message: 'EDGE_TEST_CLOCK must be true or false' })
  EDGE_TEST_CLOCK: 'true' | 'false' = 'false';

  /** How long a budget reservation holds when its request's usage event never arrives. */
  @IsInt()
  @Min(10_000)
  RESERVATION_TTL_MS: number = 900_000;

  /** How often each replica checks that Redis still holds the budget's state (its generation marker). */
  @IsInt()
  @Min(50)
  @Max(60_000)
  BUDGET_PROBE_MS: number = 1000;

  /** A Responses WebSocket with no response in progress for this long is closed (1000). */
  @IsInt()
  @Min(1)
  RESPONSES_WS_IDLE_SECONDS: number = 300;

  @IsInt()
  @Min(1024)
  BODY_LIMIT_BYTES: number = 10 * 1024 * 1024;

  /** Deepest nesting of arrays and objects in a JSON body; deeper is a 400 naming the limit. */
  @IsInt()
  @Min(8)
  @Max(1000)
  JSON_MAX_DEPTH: number = 64;

  /** A request's headers and body must have arrived this long after its first byte, else 408 and the connection is closed. */
  @IsInt()
  @Min(1000)
  BODY_TIMEOUT_MS: number = 30_000;

  /** A request's headers must have arrived this long after its first byte (at most `BODY_TIMEOUT_MS`). */
  @IsInt()
  @Min(1000)
  HEADERS_TIMEOUT_MS: number = 10_000;

  /** A console session ends after this long without a call (docs/console.md). */
  @IsInt()
  @Min(1)
  @Max(86_400)
  CONSOLE_SESSION_IDLE_SECONDS: number = 1800;

  /** A console session ends this long after sign-in, however busy. */
  @IsInt()
  @Min(1)
  @Max(2_592_000)
  CONSOLE_SESSION_MAX_SECONDS: number = 43_200;

  /**
   * `true`: the session cookie is always `Secure` (TLS ends before the edge at a proxy not in
   * TRUSTED_PROXIES). `auto`: when the request came over TLS.
   */
  @IsIn(['auto', 'true'], { message: 'CONSOLE_COOKIE_SECURE must be auto or true' })
  CONSOLE_COOKIE_SECURE: 'auto' | 'true' = 'auto';

  /** How clients reach the gateway, ending in `/v1`: the base of generated media URLs. Default: `http://localhost:<PORT>/v1`. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }, { message: 'PUBLIC_BASE_URL must be an http(s) URL' })
  PUBLIC_BASE_URL?: string;

  /** Signs the URLs of private media (HMAC-SHA256); every edge replica needs the same value. */
  @IsString({ message: 'FILE_URL_SECRET is required (32+ characters): it signs private media URLs' })
  @MinLength(32, { message: 'FILE_URL_SECRET must be at least 32 characters' })
  FILE_URL_SECRET: string;

  /** How long a private media URL works. */
  @IsInt()
  @Min(60)
  @Max(7 * 24 * 3600)
  FILE_URL_TTL_SECONDS: number = 3600;

  /** Interval of `{"heartbeat":true}` lines on a video stream while its job runs (proxies close idle streams). */
  @IsInt()
  @Min(100)
  @Max(15_000)
  VIDEO_HEARTBEAT_MS: number = 10_000;

  /** Bytes of one audio file uploaded for a transcription or translation (OpenAI's limit: 25 MB); one more is a 413. */
  @IsInt()
  @Min(1024)
  AUDIO_UPLOAD_MAX_FILE_BYTES: number = 25 * 1024 * 1024;

  /** Bytes of a whole transcription or translation request (the file, its text fields, the multipart framing). */
  @IsInt()
  @Min(1024)
  AUDIO_UPLOAD_MAX_REQUEST_BYTES: number = 26 * 1024 * 1024;

  /** Bytes of one image (or mask) uploaded for an image edit (OpenAI's limit for GPT image models: 50 MB); one more is a 413. */
  @IsInt()
  @Min(1024)
  IMAGE_UPLOAD_MAX_FILE_BYTES: number = 50 * 1024 * 1024;

  /** Bytes of a whole image edit request (every image, the mask, the text fields, the multipart framing). */
  @IsInt()
  @Min(1024)
  IMAGE_UPLOAD_MAX_REQUEST_BYTES: number = 100 * 1024 * 1024;
}
