import { ApiProperty, ApiSchema } from '@nestjs/swagger';

// The router builds this body (inference-router embeddings.service) and the edge relays it as is;
// contracts has no type for it to implement.

class EmbeddingUsage {
  @ApiProperty({ type: 'integer', description: "The upstream's count of input tokens, or gpt-tokenizer's when it reports none." })
  prompt_tokens: number;

  @ApiProperty({ type: 'integer', description: 'Equal to `prompt_tokens`.' })
  total_tokens: number;
}

@ApiSchema({ name: 'Embedding' })
export class EmbeddingSchema {
  @ApiProperty({ enum: ['embedding'] })
  object: 'embedding';

  @ApiProperty({
    oneOf: [
      { type: 'array', items: { type: 'number' }, description: '`encoding_format: float` (the default).' },
      { type: 'string', format: 'byte', description: "`encoding_format: base64`: the vector's little-endian float32 bytes." },
    ],
    description: 'The vector: the same float32 values in either encoding.',
  })
  embedding: number[] | string;

  @ApiProperty({ type: 'integer', minimum: 0, description: "The input's position in `input`." })
  index: number;
}

@ApiSchema({ name: 'EmbeddingList' })
export class EmbeddingListSchema {
  @ApiProperty({ enum: ['list'] })
  object: 'list';

  @ApiProperty({ type: [EmbeddingSchema], description: 'One per input, in input order.' })
  data: EmbeddingSchema[];

  @ApiProperty({ example: 'sim-embed' })
  model: string;

  @ApiProperty({ type: EmbeddingUsage })
  usage: EmbeddingUsage;
}
