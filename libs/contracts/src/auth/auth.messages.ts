import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, Length, Matches, Min } from 'class-validator';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The refusal of a key nobody knows, or no longer: the same words whether it never existed or was deleted. */
export const INVALID_KEY_MESSAGE = 'Invalid API key';

/** `keys.authenticate`: the edge sends the SHA-256 of the bearer key, never the key. */
export class AuthenticateKeyRequest {
  @Matches(SHA256_HEX)
  keyHash: string;
}

export const KeyChangeReasons = [
  'master_regenerated',
  'proxy_created',
  'proxy_updated',
  'proxy_toggled',
  'proxy_removed',
  'proxy_removed_all',
  'account_updated',
] as const;
export type KeyChangeReason = (typeof KeyChangeReasons)[number];

/** `keys.changed`, broadcast to every edge replica: drop cached authentications of these keys. */
export class KeysChangedEvent {
  @IsString()
  @Length(1, 64)
  accountId: string;

  /** SHA-256 hashes of the keys that changed; the edge also drops every entry of the account. */
  @IsArray()
  @ArrayMaxSize(1000)
  @Matches(SHA256_HEX, { each: true })
  keyHashes: string[];

  @IsIn(KeyChangeReasons)
  reason: KeyChangeReason;
}

/** `keys.touched`: batched `last_used` updates from an edge replica. */
export class KeysTouchedEvent {
  @IsArray()
  @ArrayMaxSize(10000)
  @IsString({ each: true })
  keyIds: string[];

  @IsInt()
  at: number;
}

/** Payloads of account-scoped commands carry the authenticated account. */
export class AccountScoped {
  @IsString()
  @Length(1, 64)
  accountId: string;
}

/**
 * `keys.view`: the calling key, named by the principal the edge authenticated, never by anything
 * the client sent, so a key can only ever be shown itself.
 */
export class KeyViewRequest extends AccountScoped {
  @IsString()
  @Length(1, 64)
  keyId: string;

  /** The moment the budgets are read at (ms; the edge's BudgetClock); defaults to now. */
  @IsOptional()
  @IsInt()
  @Min(0)
  now?: number;
}
