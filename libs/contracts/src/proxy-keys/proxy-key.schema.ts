/**
 * The answers of the proxy-key routes, field names the spec's (spelling included): key-service
 * builds the records and messages, the edge the validation answer (its budgets key-service's).
 */
import { type Static, Type } from 'typebox';
import { Literals, Nullable } from '../schema/schema-helpers';
import { SpendWindows } from '../keys';
import { KeyBudget } from './key-view.schema';

export const ProxyKeyRecord = Type.Object(
  {
    id: Type.String({
      description:
        "The key's stable id (not a secret): what `/v1/user/logs` entries call `key_id`, and what `key_id` filters `/v1/user/logs` and `/v1/user/usage` by. An extra field beside the spec's.",
      example: 'key_0f3c9a1b2c3d4e5f60718293a4b5c6d7',
    }),
    name: Type.String({ maxLength: 25 }),
    key: Type.String({ description: 'The proxy key value.', example: 'ek-proxy-…' }),
    user_id: Type.Optional(Type.String({ description: 'Owner id. Lookups only.' })),
    expires_at: Type.Integer({ description: 'Unix seconds; `-1` means no expiry.' }),
    allocated_ammount: Type.Number({ minimum: 0, description: 'Credits allocated (per `spend_window` when set).' }),
    used_ammount: Type.Number({ minimum: 0, description: 'Credits used so far (in the current window when `spend_window` is set); 0 on creation.' }),
    spend_window: Nullable(Literals(SpendWindows), { description: "`null`: one allocation for the key's lifetime." }),
    is_active: Type.Boolean({ description: 'Whether the key is enabled. Expiry does not change it.' }),
    model_whitelist: Type.Array(Type.String(), { description: 'Allowed model ids; empty means every model.' }),
    ip_whitelist: Type.Array(Type.String(), { description: 'Allowed caller addresses or CIDR blocks; empty means every address.' }),
    enabled_thinking: Type.Optional(Type.Boolean({ description: 'Lookups only.' })),
    created_at: Type.Integer({ description: 'Unix seconds.' }),
    last_used: Nullable(Type.Integer(), { description: 'Unix seconds; `null` when never used.' }),
    budgets: Type.Array(KeyBudget, {
      description: 'Every budget of the key and where it stands, as `GET /v1/key` shows them: the allocation first, then the budget windows it was given.',
    }),
  },
  { description: 'A proxy key record. `user_id` and `enabled_thinking` come with lookups only.' },
);
export type ProxyKeyRecord = Static<typeof ProxyKeyRecord>;

export const ProxyKeyRecords = Type.Array(ProxyKeyRecord);

export const MessageResponse = Type.Object({ message: Type.String({ example: 'Proxy key updated' }) });
export type MessageResponse = Static<typeof MessageResponse>;

export const ToggleResponse = Type.Object({
  message: Type.String({ example: 'Proxy key status updated' }),
  status: Type.Boolean({ description: 'The new state: `true` means active.' }),
});
export type ToggleResponse = Static<typeof ToggleResponse>;

export const ValidateProxyKeyResponse = Type.Object({
  valid: Type.Boolean(),
  message: Type.String({
    description:
      "`Access granted`, or the first check that failed: `Proxy key is inactive`, `Proxy key has expired`, `Model '<model>' not in whitelist`, `IP address not in whitelist`.",
  }),
  budgets: Type.Array(KeyBudget, { description: "The key's budgets and where they stand, as `GET /v1/key` shows them." }),
});
export type ValidateProxyKeyResponse = Static<typeof ValidateProxyKeyResponse>;

/** `GET /v1/auth/key/regen`: key-service's answer, relayed as is. */
export const RegeneratedKey = Type.Object({
  key: Type.String({ description: 'The new primary key. The previous one is refused at once.', example: 'ek-…' }),
});
export type RegeneratedKey = Static<typeof RegeneratedKey>;
