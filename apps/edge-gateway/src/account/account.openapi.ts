import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { LogEntry, SUMMARY_ROUTES, USAGE_STATUSES, UsageStatus, UsageSummary } from '@gateway/contracts';

class TokenTotals {
  @ApiProperty({ type: 'integer', description: 'Input tokens consumed.' })
  input_tokens: number;

  @ApiProperty({ type: 'integer', description: 'Output tokens generated.' })
  output_tokens: number;
}

class HistoryDay {
  @ApiProperty({ format: 'date', example: '2026-01-31', description: 'UTC day, `YYYY-MM-DD`.' })
  date: string;

  @ApiProperty({ type: 'integer' })
  requests: number;
}

@ApiSchema({ name: 'UsageSummary' })
export class UsageSummarySchema implements UsageSummary {
  @ApiProperty({ description: 'Plan name.', example: 'pro' })
  subscription: string;

  @ApiProperty({ description: 'Credits remaining.' })
  credits: number;

  @ApiProperty({ type: TokenTotals })
  usage: TokenTotals;

  @ApiProperty({ type: [HistoryDay], description: 'Daily request counts.' })
  history: HistoryDay[];

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    description: `Request counts by route; always has ${SUMMARY_ROUTES.map((route) => `\`${route}\``).join(', ')}.`,
  })
  endpoints: Record<string, number>;
}

@ApiSchema({ name: 'LogEntry' })
export class LogEntrySchema implements LogEntry {
  @ApiProperty({
    description: "The gateway's request id: the `x-request-id` header the request was answered with.",
    example: 'req_0f3c9a1b2c3d4e5f60718293a4b5c6d7',
  })
  request_id: string;

  @ApiProperty({ description: 'The key used, masked (prefix and last 4 characters).', example: 'ek-...a1b2' })
  key: string;

  @ApiProperty()
  model: string;

  @ApiProperty({ description: 'The route called, e.g. `chat.completions`.' })
  route: string;

  @ApiProperty({ description: 'Credits charged.' })
  credits: number;

  @ApiProperty({ type: 'integer', description: 'Unix seconds.' })
  timestamp: number;

  @ApiProperty({ enum: USAGE_STATUSES })
  status: UsageStatus;

  @ApiProperty({ description: 'Caller address (IPv4 or IPv6).' })
  ip: string;

  @ApiPropertyOptional({ type: 'integer', description: 'Text models only. Every input token, cache reads and writes included.' })
  input_tokens?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'Text models only.' })
  output_tokens?: number;

  @ApiPropertyOptional({
    type: 'integer',
    description:
      "`chat.completions`, `responses` and `messages` only: of `input_tokens`, those read from the provider's prompt cache (charged at the model's `pricing.cache_read`).",
  })
  cache_read_input_tokens?: number;

  @ApiPropertyOptional({
    type: 'integer',
    description:
      "`chat.completions`, `responses` and `messages` only: of `input_tokens`, those written to the provider's prompt cache (charged at the model's `pricing.cache_write`).",
  })
  cache_creation_input_tokens?: number;
}
