import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsNumber, IsOptional, IsString, Length, MaxLength, Min } from 'class-validator';
import { SpendWindow, SpendWindows } from '../keys';
import { IsExpiry, IsIpOrCidr, IsOptionalNotNull, IsStorableText } from '../validation';
import { BudgetWindow, CalendarPeriods, IsBudgetWindows, MAX_BUDGET_WINDOWS } from './budget-window';

export const PROXY_KEY_NAME_MAX = 25;
export const PROXY_KEY_VALUE_MAX = 256;
export const WHITELIST_MAX_ENTRIES = 256;
/**
 * The largest daily limit an operator may configure. An allocation is refused above the account's
 * daily limit (with the spec's message, however large the amount), so no allocation reaches the
 * decimal column's bounds.
 */
export const ALLOCATION_CEILING = 1_000_000_000;

// No upper bound here: above the daily limit the key service answers the spec's message.
const amountRules = [IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: 8 }), Min(0)];
const apply =
  (decorators: PropertyDecorator[]): PropertyDecorator =>
  (target, key) =>
    decorators.forEach((decorator) => decorator(target, key));

// The OpenAPI reference is generated from these classes (apps/edge-gateway/src/openapi): each
// property states, next to its validation rules, the same rules for the document.
const doc = {
  proxyKey: { description: 'The proxy key acted on (`ek-proxy-…`), owned by the caller.', minLength: 1, maxLength: PROXY_KEY_VALUE_MAX },
  name: { description: 'Display name.', minLength: 1, maxLength: PROXY_KEY_NAME_MAX },
  expiresAt: {
    type: 'integer',
    description: 'Unix seconds; `-1` means no expiry. Otherwise it must be in the future.',
    minimum: -1,
    example: -1,
  },
  allocatedAmount: {
    description: "Credits the key may spend (per `spend_window` when one is set); at most 8 decimals and not above the plan's daily limit.",
    minimum: 0,
    example: 5,
  },
  spendWindow: {
    enum: [...SpendWindows],
    nullable: true,
    description: "The window the allocation applies per; `null` or absent: one allocation for the key's lifetime.",
  },
  modelWhitelist: {
    type: 'array',
    items: { type: 'string', maxLength: 256 },
    maxItems: WHITELIST_MAX_ENTRIES,
    description: 'Model ids the key may use; empty means every model.',
  },
  ipWhitelist: {
    type: 'array',
    items: { type: 'string', description: 'An IPv4 or IPv6 address or CIDR block.' },
    maxItems: WHITELIST_MAX_ENTRIES,
    description: 'Caller addresses or CIDR blocks the key may be used from; empty means every address.',
    example: ['203.0.113.0/24'],
  },
  enabledThinking: { description: 'Whether the key may use extended thinking.' },
} as const;

const budgetsDoc: ApiPropertyOptions = {
  type: 'array',
  maxItems: MAX_BUDGET_WINDOWS,
  items: {
    type: 'object',
    required: ['amount', 'period'],
    additionalProperties: false,
    properties: {
      amount: { type: 'number', minimum: 0, description: 'Credits the key may spend per window (at most 8 decimals).' },
      period: {
        type: 'string',
        description: `A rolling duration from \`30m\` to \`90d\` (\`m\`, \`h\` or \`d\`: \`5h\`, \`7d\`), or a calendar unit: ${CalendarPeriods.map((unit) => `\`${unit}\``).join(', ')} (weeks start on Monday).`,
        example: '5h',
      },
      timezone: { type: 'string', description: 'IANA time zone the calendar windows start at midnight in. Default `UTC`.', example: 'Europe/Berlin' },
    },
  },
  description:
    'Budget windows beyond the allocation, each enforced as well: a request is admitted only when every window (and the allocation) has room. Periods must differ from each other and from the `spend_window` allocation in UTC. On update, the list replaces the stored one (`[]` removes them).',
  example: [{ amount: 1, period: '5h' }],
};

/** The proxy key the operation acts on, named in the body. */
@ApiSchema({ name: 'ProxyKeyReference' })
export class ProxyKeyRef {
  @ApiProperty(doc.proxyKey)
  @IsString()
  @Length(1, PROXY_KEY_VALUE_MAX)
  @IsStorableText()
  proxy_key: string;
}

@ApiSchema({ name: 'CreateProxyKeyRequest' })
export class CreateProxyKeyDto {
  @ApiProperty(doc.name)
  @IsString()
  @Length(1, PROXY_KEY_NAME_MAX)
  @IsStorableText()
  name: string;

  @ApiPropertyOptional({ ...doc.expiresAt, default: -1 })
  @IsOptionalNotNull()
  @IsExpiry()
  expires_at?: number;

  @ApiProperty(doc.allocatedAmount)
  @apply(amountRules)
  allocated_ammount: number;

  /** Allocation window; `null` or absent means the allocation covers the key's lifetime. */
  @ApiPropertyOptional(doc.spendWindow)
  @IsOptional()
  @IsIn(SpendWindows)
  spend_window?: SpendWindow | null;

  @ApiPropertyOptional({ ...doc.modelWhitelist, default: [] })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(WHITELIST_MAX_ENTRIES)
  @IsString({ each: true })
  @MaxLength(256, { each: true })
  @IsStorableText({ each: true })
  model_whitelist?: string[];

  @ApiPropertyOptional({ ...doc.ipWhitelist, default: [] })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(WHITELIST_MAX_ENTRIES)
  @IsIpOrCidr({ each: true })
  ip_whitelist?: string[];

  @ApiPropertyOptional({ ...doc.enabledThinking, default: false })
  @IsOptionalNotNull()
  @IsBoolean()
  enabled_thinking?: boolean;

  @ApiPropertyOptional({ ...budgetsDoc, default: [] })
  @IsOptionalNotNull()
  @IsBudgetWindows()
  budgets?: BudgetWindow[];
}

/** Update fields without the key reference, for the legacy `update/{proxy_key}` path form. */
@ApiSchema({ name: 'UpdateProxyKeyFields', description: 'Only the fields sent change.' })
export class UpdateProxyKeyFieldsDto {
  @ApiPropertyOptional(doc.name)
  @IsOptionalNotNull()
  @IsString()
  @Length(1, PROXY_KEY_NAME_MAX)
  @IsStorableText()
  name?: string;

  @ApiPropertyOptional(doc.expiresAt)
  @IsOptionalNotNull()
  @IsExpiry()
  expires_at?: number;

  @ApiPropertyOptional(doc.allocatedAmount)
  @IsOptionalNotNull()
  @apply(amountRules)
  allocated_ammount?: number;

  @ApiPropertyOptional(doc.spendWindow)
  @IsOptional()
  @IsIn(SpendWindows)
  spend_window?: SpendWindow | null;

  @ApiPropertyOptional(doc.modelWhitelist)
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(WHITELIST_MAX_ENTRIES)
  @IsString({ each: true })
  @MaxLength(256, { each: true })
  @IsStorableText({ each: true })
  model_whitelist?: string[];

  @ApiPropertyOptional(doc.ipWhitelist)
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(WHITELIST_MAX_ENTRIES)
  @IsIpOrCidr({ each: true })
  ip_whitelist?: string[];

  @ApiPropertyOptional(doc.enabledThinking)
  @IsOptionalNotNull()
  @IsBoolean()
  enabled_thinking?: boolean;

  @ApiPropertyOptional(budgetsDoc)
  @IsOptionalNotNull()
  @IsBudgetWindows()
  budgets?: BudgetWindow[];
}

@ApiSchema({ name: 'UpdateProxyKeyRequest', description: 'Only the fields sent change.' })
export class UpdateProxyKeyDto extends UpdateProxyKeyFieldsDto {
  @ApiProperty(doc.proxyKey)
  @IsString()
  @Length(1, PROXY_KEY_VALUE_MAX)
  @IsStorableText()
  proxy_key: string;
}

@ApiSchema({ name: 'ValidateProxyKeyRequest' })
export class ValidateProxyKeyDto {
  @ApiPropertyOptional({ description: "Checked against the key's `model_whitelist` when sent.", maxLength: 256 })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  @IsStorableText()
  model?: string;
}
