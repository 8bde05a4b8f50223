import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'RegeneratedKey' })
export class RegeneratedKeySchema {
  @ApiProperty({ description: 'The new primary key. The previous one is refused at once.', example: 'ek-…' })
  key: string;
}
