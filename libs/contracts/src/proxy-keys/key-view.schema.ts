/**
 * `GET /v1/key`: the calling key as its holder may see it, and what it has left. key-service builds
 * it from the key's row (the spend the ledger keeps on it); the edge relays it, and takes its
 * `budgets` for the validate answer.
 */
import { type Static, Type } from 'typebox';
import { Literals, Nullable } from '../schema/schema-helpers';
import { type KeyType, Plans } from '../keys';

/** The key types as the API names them (`dev` is the DevPass key). */
export const KeyTypeNames = { master: 'master', proxy: 'proxy', dev: 'devpass' } as const satisfies Record<KeyType, string>;

export const KeyBudget = Type.Object(
  {
    period: Type.String({
      description:
        "The window the amount is for: the allocation's `spend_window` (`daily`, `weekly`, `monthly`) or `lifetime` (never resets), or a budget window's period (a rolling `30m`…`90d`, or `daily`, `weekly`, `monthly`, `quarterly`).",
      example: '5h',
    }),
    timezone: Type.String({ description: 'The IANA time zone calendar boundaries are midnight in (the allocation: always `UTC`).', example: 'UTC' }),
    unit: Literals(['credits', 'tokens'] as const, {
      description:
        'What `amount`, `used` and `remaining` count: credits (a proxy key), or input plus output tokens (a DevPass key, whose usage never touches credits).',
    }),
    amount: Type.Number({ minimum: 0, description: 'Allowed per window (the allocation: `allocated_ammount`).' }),
    used: Type.Number({ minimum: 0, description: 'What the ledger counted against the key in the current window (the allocation: `used_ammount`).' }),
    remaining: Type.Number({ minimum: 0, description: '`amount - used`, never below 0.' }),
    resets_at: Nullable(Type.Integer(), {
      description:
        'Unix seconds. A calendar window: when the next one starts and `used` is 0 again (midnight, Monday 00:00, the 1st 00:00 in `timezone`). A rolling window: when its oldest charge still inside leaves it (`null` when it holds none). `null` for `lifetime`.',
    }),
  },
  { description: 'One spending limit of the key and where it stands.' },
);
export type KeyBudget = Static<typeof KeyBudget>;

export const KeyView = Type.Object(
  {
    type: Literals(Object.values(KeyTypeNames), { description: 'The key type.' }),
    name: Nullable(Type.String(), { description: 'The name it was given; `null` when it has none.' }),
    masked_key: Type.String({ description: 'The key, masked (prefix and last 4 characters).', example: 'ek-proxy-...a1b2' }),
    plan: Literals(Plans, { description: "The account's plan." }),
    is_active: Type.Boolean({ description: 'Whether the key is enabled (always `true` for master and DevPass keys). Expiry does not change it.' }),
    expires_at: Type.Integer({ description: 'Unix seconds; `-1` means no expiry.' }),
    model_whitelist: Type.Array(Type.String(), { description: 'Allowed model ids; empty means every model the key type may use.' }),
    ip_whitelist: Type.Array(Type.String(), { description: 'Allowed caller addresses or CIDR blocks; empty means every address.' }),
    budgets: Type.Array(KeyBudget, {
      description:
        "The limits the key spends against, one entry per window. A proxy key: its allocation first, then its budget windows in the order they were set. A DevPass key: its plan's token windows. A master key has none (the account's credits are in `/v1/user/me`).",
    }),
  },
  { description: 'The calling key, whatever its type.' },
);
export type KeyView = Static<typeof KeyView>;
