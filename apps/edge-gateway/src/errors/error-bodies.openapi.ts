import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { ErrorFormat } from './error-formats';

const REQUEST_ID = { description: '5xx only: quote it when reporting the failure.', example: 'req_0f3c…' };

class OpenAIErrorDetail {
  @ApiProperty({ description: 'What went wrong, naming the field at fault.' })
  message: string;

  @ApiProperty({ description: 'Error class, e.g. `invalid_request_error`, `authentication_error`, `rate_limit_error`.' })
  type: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'Machine-readable code, e.g. `model_not_supported`; may be null.' })
  code: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'The offending request field as a dotted path, e.g. `messages.0.role`.' })
  param: string | null;

  @ApiPropertyOptional({ type: 'integer', description: 'Decisions, 429 only: seconds to wait (also sent as `Retry-After`).' })
  retry_after?: number;
}

@ApiSchema({ name: 'OpenAIError', description: 'Error body of the OpenAI-style routes and of decisions.' })
export class OpenAIErrorBody {
  @ApiProperty({ type: OpenAIErrorDetail })
  error: OpenAIErrorDetail;

  @ApiPropertyOptional(REQUEST_ID)
  request_id?: string;
}

class AnthropicErrorDetail {
  @ApiProperty({ description: 'Error class, e.g. `invalid_request_error`, `authentication_error`, `overloaded_error`.' })
  type: string;

  @ApiProperty()
  message: string;
}

@ApiSchema({ name: 'AnthropicError', description: 'Error body of `/v1/messages`.' })
export class AnthropicErrorBody {
  @ApiProperty({ enum: ['error'] })
  type: 'error';

  @ApiProperty({ type: AnthropicErrorDetail })
  error: AnthropicErrorDetail;

  @ApiPropertyOptional(REQUEST_ID)
  request_id?: string;
}

@ApiSchema({ name: 'DetailError', description: 'Error body of the key routes (`/v1/auth/…`).' })
export class DetailErrorBody {
  @ApiProperty({ description: 'What went wrong, e.g. `Proxy key not found`.' })
  detail: string;

  @ApiPropertyOptional(REQUEST_ID)
  request_id?: string;
}

/** The body schema of each error format; a route picks its format with `@ErrorFormat`. */
export const ERROR_BODY_SCHEMAS: Record<ErrorFormat, new () => object> = {
  openai: OpenAIErrorBody,
  anthropic: AnthropicErrorBody,
  detail: DetailErrorBody,
};
