import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'MessagesTokenCount', description: "Anthropic's `MessageTokensCount`." })
export class MessagesTokenCountSchema {
  @ApiProperty({ type: 'integer', description: 'Input tokens of the body (system, messages and tools), as a generation would be billed them.' })
  input_tokens: number;
}

@ApiSchema({ name: 'ResponsesInputTokens', description: "OpenAI's `InputTokenCountResponse`." })
export class ResponsesInputTokensSchema {
  @ApiProperty({ enum: ['response.input_tokens'] })
  object: 'response.input_tokens';

  @ApiProperty({ type: 'integer', description: 'Input tokens of the body (instructions, input and tools), as a generation would be billed them.' })
  input_tokens: number;
}
