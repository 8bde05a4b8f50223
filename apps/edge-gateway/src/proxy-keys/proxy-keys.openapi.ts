import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { MessageResponse, ProxyKeyRecord, SpendWindow, SpendWindows, ToggleResponse } from '@gateway/contracts';
import type { ValidateResponse } from './proxy-keys.controller';

// Response schemas of the proxy-key routes. Each implements the contracts type the route returns,
// so a field added there and not here fails to compile.

@ApiSchema({ name: 'ProxyKey', description: 'A proxy key record. `user_id` and `enabled_thinking` come with lookups only.' })
export class ProxyKeyRecordSchema implements ProxyKeyRecord {
  @ApiProperty({ maxLength: 25 })
  name: string;

  @ApiProperty({ description: 'The proxy key value.', example: 'ek-proxy-…' })
  key: string;

  @ApiPropertyOptional({ description: 'Owner id. Lookups only.' })
  user_id?: string;

  @ApiProperty({ type: 'integer', description: 'Unix seconds; `-1` means no expiry.' })
  expires_at: number;

  @ApiProperty({ minimum: 0, description: 'Credits allocated (per `spend_window` when set).' })
  allocated_ammount: number;

  @ApiProperty({ minimum: 0, description: 'Credits used so far (in the current window when `spend_window` is set); 0 on creation.' })
  used_ammount: number;

  @ApiProperty({ enum: [...SpendWindows], nullable: true, description: "`null`: one allocation for the key's lifetime." })
  spend_window: SpendWindow | null;

  @ApiProperty({ description: 'Whether the key is enabled. Expiry does not change it.' })
  is_active: boolean;

  @ApiProperty({ type: [String], description: 'Allowed model ids; empty means every model.' })
  model_whitelist: string[];

  @ApiProperty({ type: [String], description: 'Allowed caller addresses or CIDR blocks; empty means every address.' })
  ip_whitelist: string[];

  @ApiPropertyOptional({ description: 'Lookups only.' })
  enabled_thinking?: boolean;

  @ApiProperty({ type: 'integer', description: 'Unix seconds.' })
  created_at: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Unix seconds; `null` when never used.' })
  last_used: number | null;
}

@ApiSchema({ name: 'MessageResponse' })
export class MessageResponseSchema implements MessageResponse {
  @ApiProperty({ example: 'Proxy key updated' })
  message: string;
}

@ApiSchema({ name: 'ToggleResponse' })
export class ToggleResponseSchema implements ToggleResponse {
  @ApiProperty({ example: 'Proxy key status updated' })
  message: string;

  @ApiProperty({ description: 'The new state: `true` means active.' })
  status: boolean;
}

@ApiSchema({ name: 'ValidateProxyKeyResponse' })
export class ValidateResponseSchema implements ValidateResponse {
  @ApiProperty()
  valid: boolean;

  @ApiProperty({
    description:
      "`Access granted`, or the first check that failed: `Proxy key is inactive`, `Proxy key has expired`, `Model '<model>' not in whitelist`, `IP address not in whitelist`.",
  })
  message: string;
}
