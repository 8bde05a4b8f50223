import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { ModelEntry } from '@gateway/contracts';

class ModelPricing {
  @ApiProperty({ description: 'Credits per million input tokens.' })
  input: number;

  @ApiProperty({ description: 'Credits per million output tokens.' })
  output: number;

  @ApiPropertyOptional({ description: "Credits per million input tokens read from the provider's prompt cache; `input` when absent." })
  cache_read?: number;

  @ApiPropertyOptional({ description: "Credits per million input tokens written to the provider's prompt cache; `input` when absent." })
  cache_write?: number;

  @ApiPropertyOptional({ description: 'Credits per generated item (an image, a video), for media models.' })
  per_item?: number;
}

/** Not every entry carries every field. */
@ApiSchema({ name: 'Model' })
export class ModelEntrySchema implements ModelEntry {
  @ApiProperty({ example: 'sim-chat' })
  id: string;

  @ApiProperty({ enum: ['model'] })
  object: 'model';

  @ApiPropertyOptional()
  name?: string;

  @ApiPropertyOptional()
  description?: string;

  @ApiPropertyOptional()
  owned_by?: string;

  @ApiPropertyOptional({ type: 'integer', description: 'Unix seconds.' })
  created?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'Context window, in tokens.' })
  tokens?: number;

  @ApiPropertyOptional({ type: ModelPricing })
  pricing?: ModelPricing;

  @ApiPropertyOptional({ type: [String], description: 'Usage route names the model serves, e.g. `chat.completions`.' })
  endpoints?: string[];

  @ApiPropertyOptional()
  premium_model?: boolean;

  @ApiPropertyOptional({ type: [String] })
  voices?: string[];

  @ApiPropertyOptional({ type: [String] })
  sizes?: string[];

  @ApiPropertyOptional({ type: [String] })
  qualities?: string[];

  @ApiPropertyOptional({ type: [String] })
  tags?: string[];

  @ApiPropertyOptional({ type: [String] })
  styles?: string[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  metadata?: Record<string, unknown>;
}

@ApiSchema({ name: 'ModelList' })
export class ModelListSchema {
  @ApiProperty({ enum: ['list'] })
  object: 'list';

  @ApiProperty({ type: [ModelEntrySchema] })
  data: ModelEntrySchema[];
}
