import { Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsPositive,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

/**
 * The catalog takes any well-formed adapter name: which names exist is the router's registry
 * (`providers/provider-adapters.ts`), which refuses unknown ones at startup, so a new provider is
 * its folder plus one registry line.
 */
export const ADAPTER_NAME = /^[a-z][a-z0-9-]{0,63}$/;
export type AdapterName = string;

/** A route's circuit breaker (defaults: BREAKER_DEFAULTS). */
export class BreakerConfig {
  /** Failures (connect errors, timeouts, 429, 5xx) within `window_seconds` that open the breaker. */
  @IsOptional() @IsInt() @Min(1) @Max(1000) failures?: number;
  @IsOptional() @IsNumber() @IsPositive() @Max(3600) window_seconds?: number;
  /** How long an open breaker keeps the route out before one probe request may try it. */
  @IsOptional() @IsNumber() @IsPositive() @Max(3600) cooldown_seconds?: number;
}

export const BREAKER_DEFAULTS = { failures: 5, window_seconds: 30, cooldown_seconds: 30 } as const;

/** Names a route in metrics and usage events (`<model>/<name>`); the route's index when absent. */
export const ROUTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * One upstream a model can be served from. Requests go to the usable routes of the best (lowest)
 * `priority`, spread by `weight`; the next priority is the fallback (see `routePlan` in model-catalog.ts).
 */
export class RouteConfig {
  @Matches(ADAPTER_NAME, { message: 'adapter must be a provider name (lowercase letters, digits and dashes)' })
  adapter: AdapterName;

  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  base_url?: string;

  @IsString()
  upstream_model: string;

  /** Name of the environment variable holding the provider key; the route is dropped when it is unset. */
  @IsOptional()
  @Matches(/^[A-Z_][A-Z0-9_]*$/, { message: 'api_key_env must be an environment variable name' })
  api_key_env?: string;

  @IsOptional()
  @IsObject()
  options?: Record<string, unknown>;

  /**
   * anthropic routes: the upstream model takes Anthropic's own structured-output field
   * (`output_config.format`). Without it a JSON schema is asked for as a forced tool call.
   */
  @IsOptional()
  @IsBoolean()
  structured_outputs?: boolean;

  /** Label in metrics and usage events: `<model id>/<name>` (default: the route's index in the list). */
  @IsOptional()
  @Matches(ROUTE_NAME, { message: 'name may hold letters, digits and ._- (at most 64)' })
  name?: string;

  /** Share of its priority group's traffic (default 1). */
  @IsOptional() @IsNumber() @IsPositive() @Max(1_000_000) weight?: number;

  /** Lower first; the next priority takes over when no route of this one is usable. */
  @IsOptional() @IsInt() @Min(0) @Max(1000) priority?: number;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => BreakerConfig)
  breaker?: BreakerConfig;

  /** The provider key's limits, shared by every router replica: requests per minute, tokens per minute, requests at once. */
  @IsOptional() @IsInt() @Min(1) rpm?: number;
  @IsOptional() @IsInt() @Min(1) tpm?: number;
  @IsOptional() @IsInt() @Min(1) max_concurrency?: number;
}

export class PricingConfig {
  /** Credits per million input tokens. */
  @IsNumber()
  @Min(0)
  input: number;

  /** Credits per million output tokens. */
  @IsNumber()
  @Min(0)
  output: number;

  /** Credits per million input tokens read from the provider's prompt cache; the input price when absent. */
  @IsOptional()
  @IsNumber()
  @Min(0)
  cache_read?: number;

  /** Credits per million input tokens written to the provider's prompt cache; the input price when absent. */
  @IsOptional()
  @IsNumber()
  @Min(0)
  cache_write?: number;

  /** Credits per generated item (an image, a video), for media models; added to any token cost. */
  @IsOptional()
  @IsNumber()
  @Min(0)
  per_item?: number;

  /**
   * Credits per second of audio transcribed or translated: the charge when the upstream reports no
   * tokens (its seconds, else the file's duration), and always the reservation's worst case.
   */
  @IsOptional()
  @IsNumber()
  @Min(0)
  per_second?: number;
  /** Credits per million input characters (speech), charged when the upstream reports no tokens; added to any token cost. */
  @IsOptional()
  @IsNumber()
  @Min(0)
  characters?: number;
}

export class ModelConfig {
  @IsString()
  @Matches(/^[A-Za-z0-9._/:@-]{1,128}$/, { message: 'id may hold letters, digits and ._/:@- (at most 128)' })
  id: string;

  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsString() description?: string;
  @IsOptional() @IsString() owned_by?: string;
  @IsOptional() @IsInt() @Min(0) created?: number;

  /** Context window in tokens. */
  @IsOptional() @IsInt() @Min(1) tokens?: number;

  /** Default output cap when the request sets none (also the worst case budgeted for it). */
  @IsOptional() @IsInt() @Min(1) max_output_tokens?: number;

  /** Required: every served request is metered at these prices. */
  @IsObject()
  @ValidateNested()
  @Type(() => PricingConfig)
  pricing: PricingConfig;

  @IsArray() @IsString({ each: true }) endpoints: string[];
  @IsOptional() @IsBoolean() premium_model?: boolean;
  @IsOptional() @IsArray() @IsString({ each: true }) voices?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) sizes?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) qualities?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) tags?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) styles?: string[];
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;

  /** Image models: the largest `n` one request may ask for (the spec allows 1 to 10; some models only 1). */
  @IsOptional() @IsInt() @Min(1) @Max(10) max_images?: number;

  @IsArray()
  @ArrayMinSize(1)
  @ValidateNested({ each: true })
  @Type(() => RouteConfig)
  routes: RouteConfig[];
}

export class CatalogConfig {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ModelConfig)
  models: ModelConfig[];
}
