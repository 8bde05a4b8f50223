import { DatabaseEnv } from '@gateway/platform';
import { IsInt, Max, Min } from 'class-validator';

export class AccountEnv extends DatabaseEnv {
  /** How long a stored Responses-API response stays readable: 30 days, as OpenAI keeps them; a conversation, as long after its last write. */
  @IsInt()
  @Min(60)
  @Max(10 * 365 * 86_400)
  RESPONSES_RETENTION_SECONDS: number = 30 * 86_400;

  /** How often each replica deletes expired stored responses and conversations (reads never return them either way). */
  @IsInt()
  @Min(1_000)
  @Max(86_400_000)
  RESPONSES_PRUNE_INTERVAL_MS: number = 3_600_000;
}
