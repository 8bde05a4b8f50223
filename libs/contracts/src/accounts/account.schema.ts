/** `GET /v1/user/me` and `GET /v1/user/logs`: the bodies account-service builds and the edge relays. */
import { type Static, Type } from 'typebox';
import { Dict, Literals } from '../schema/schema-helpers';
import { USAGE_STATUSES } from '../inference/usage.events';
import { SUMMARY_ROUTES } from './account.messages';

export const UsageSummary = Type.Object({
  subscription: Type.String({ description: 'Plan name.', example: 'pro' }),
  credits: Type.Number({ description: 'Credits remaining.' }),
  usage: Type.Object({
    input_tokens: Type.Integer({ description: 'Input tokens consumed.' }),
    output_tokens: Type.Integer({ description: 'Output tokens generated.' }),
  }),
  history: Type.Array(
    Type.Object({
      date: Type.String({ format: 'date', example: '2026-01-31', description: 'UTC day, `YYYY-MM-DD`.' }),
      requests: Type.Integer(),
    }),
    { description: 'Daily request counts.' },
  ),
  endpoints: Dict(Type.Integer(), {
    description: `Request counts by route; always has ${SUMMARY_ROUTES.map((route) => `\`${route}\``).join(', ')}.`,
  }),
});
export type UsageSummary = Static<typeof UsageSummary>;

const CACHE_ROUTES = '`chat.completions`, `responses` and `messages` only';

export const LogEntry = Type.Object({
  request_id: Type.String({
    description: "The gateway's request id: the `x-request-id` header the request was answered with.",
    example: 'req_0f3c9a1b2c3d4e5f60718293a4b5c6d7',
  }),
  key: Type.String({ description: 'The key used, masked (prefix and last 4 characters).', example: 'ek-...a1b2' }),
  key_id: Type.String({
    description: "The key used, by its stable id (not a secret; a proxy key's record has it as `id`). An extra field beside the spec's.",
    example: 'key_0f3c9a1b2c3d4e5f60718293a4b5c6d7',
  }),
  model: Type.String(),
  route: Type.String({ description: 'The route called, e.g. `chat.completions`.' }),
  credits: Type.Number({ description: 'Credits charged.' }),
  timestamp: Type.Integer({ description: 'Unix seconds.' }),
  status: Literals(USAGE_STATUSES),
  ip: Type.String({ description: 'Caller address (IPv4 or IPv6).' }),
  input_tokens: Type.Optional(Type.Integer({ description: 'Text models only. Every input token, cache reads and writes included.' })),
  output_tokens: Type.Optional(Type.Integer({ description: 'Text models only.' })),
  cache_read_input_tokens: Type.Optional(
    Type.Integer({
      description: `${CACHE_ROUTES}: of \`input_tokens\`, those read from the provider's prompt cache (charged at the model's \`pricing.cache_read\`).`,
    }),
  ),
  cache_creation_input_tokens: Type.Optional(
    Type.Integer({
      description: `${CACHE_ROUTES}: of \`input_tokens\`, those written to the provider's prompt cache (charged at the model's \`pricing.cache_write\`).`,
    }),
  ),
  refused_by: Type.Optional(
    Type.Object(
      {
        period: Type.String({
          description: "The window's period, as `GET /v1/key` names it (`5h`, `weekly`, a proxy key's allocation: its `spend_window` or `lifetime`).",
          example: '5h',
        }),
        timezone: Type.String({ example: 'UTC' }),
      },
      {
        description:
          'Entries with status `refused` only: the budget window of the key that was spent (a 402 for a proxy key, a 429 for a DevPass key). Nothing was sent upstream and nothing charged.',
      },
    ),
  ),
});
export type LogEntry = Static<typeof LogEntry>;

export const LogEntries = Type.Array(LogEntry);

const Credits = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description, example: '12.5' });

export const UsageSeries = Type.Object(
  {
    object: Type.Literal('usage.series'),
    timezone: Type.String({ description: 'The IANA time zone of the buckets.', example: 'Asia/Kolkata' }),
    bucket: Literals(['hour', 'day'] as const),
    group_by: Literals(['model', 'key', 'route', 'none'] as const),
    from: Type.Integer({ description: 'Unix seconds, inclusive.' }),
    to: Type.Integer({ description: 'Unix seconds, exclusive.' }),
    groups: Type.Array(
      Type.Object({
        group: Type.String({ description: 'The model, the route, the key id (`group_by=key`), or `all` (`group_by=none`).' }),
        label: Type.String({ description: "For keys: the key's name and masked value; otherwise the group itself." }),
      }),
      { description: 'Every group that has a point, in order.' },
    ),
    points: Type.Array(
      Type.Object({
        start: Type.Integer({ description: 'Unix seconds: the start of the local hour or day, in `timezone`.' }),
        date: Type.String({ description: 'The local day (`YYYY-MM-DD`) or hour (`YYYY-MM-DDTHH:00`) in `timezone`.', example: '2026-11-27' }),
        group: Type.String(),
        requests: Type.Integer({ description: 'Requests served (refused requests are not counted).' }),
        input_tokens: Type.Integer(),
        output_tokens: Type.Integer(),
        credits: Credits('Credits charged, as an exact decimal string.'),
      }),
      { description: 'One point per bucket and group with usage, by `start` then `group`; buckets without usage have none.' },
    ),
    totals: Type.Object({
      requests: Type.Integer(),
      input_tokens: Type.Integer(),
      output_tokens: Type.Integer(),
      credits: Credits('Credits charged over the whole span, as an exact decimal string.'),
    }),
  },
  { description: 'Usage over time in a reporting time zone, from 15-minute rollups written with the ledger.' },
);
export type UsageSeries = Static<typeof UsageSeries>;
