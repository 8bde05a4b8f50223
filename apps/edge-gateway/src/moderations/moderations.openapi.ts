import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { ModerationCategory } from '@gateway/contracts';

// The router builds this body (inference-router moderations) and the edge relays it as is;
// contracts has no type for it to implement. Both maps implement a record over the spec's 11
// categories, so a category missing here fails to compile.

@ApiSchema({ name: 'ModerationCategories', description: 'Whether each category applies (its score is 0.5 or more for the simulator).' })
class ModerationCategoriesSchema implements Record<ModerationCategory, boolean> {
  @ApiProperty() sexual: boolean;
  @ApiProperty() hate: boolean;
  @ApiProperty() harassment: boolean;
  @ApiProperty() 'self-harm': boolean;
  @ApiProperty() 'sexual/minors': boolean;
  @ApiProperty() 'hate/threatening': boolean;
  @ApiProperty() 'violence/graphic': boolean;
  @ApiProperty() 'self-harm/intent': boolean;
  @ApiProperty() 'self-harm/instructions': boolean;
  @ApiProperty() 'harassment/threatening': boolean;
  @ApiProperty() violence: boolean;
}

const score = { type: 'number', minimum: 0, maximum: 1 } as const;

@ApiSchema({ name: 'ModerationCategoryScores', description: 'A score from 0 to 1 per category.' })
class ModerationCategoryScoresSchema implements Record<ModerationCategory, number> {
  @ApiProperty(score) sexual: number;
  @ApiProperty(score) hate: number;
  @ApiProperty(score) harassment: number;
  @ApiProperty(score) 'self-harm': number;
  @ApiProperty(score) 'sexual/minors': number;
  @ApiProperty(score) 'hate/threatening': number;
  @ApiProperty(score) 'violence/graphic': number;
  @ApiProperty(score) 'self-harm/intent': number;
  @ApiProperty(score) 'self-harm/instructions': number;
  @ApiProperty(score) 'harassment/threatening': number;
  @ApiProperty(score) violence: number;
}

@ApiSchema({ name: 'ModerationVerdict' })
class ModerationVerdictSchema {
  @ApiProperty({ description: 'Whether any category applies.' })
  flagged: boolean;

  @ApiProperty({ type: ModerationCategoriesSchema })
  categories: ModerationCategoriesSchema;

  @ApiProperty({ type: ModerationCategoryScoresSchema })
  category_scores: ModerationCategoryScoresSchema;
}

@ApiSchema({ name: 'ModerationResult' })
export class ModerationResultSchema {
  @ApiProperty({ example: 'modr-…' })
  id: string;

  @ApiProperty({ example: 'sim-moderation' })
  model: string;

  @ApiProperty({ type: [ModerationVerdictSchema], description: 'One per input, in input order.' })
  results: ModerationVerdictSchema[];
}
