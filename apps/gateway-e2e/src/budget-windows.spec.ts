/**
 * A proxy key's budget windows (`budgets`): several at once, rolling and calendar, in a time zone,
 * enforced together across two edges and reported by `GET /v1/key` as the ledger holds them. Time
 * is moved on two edges of this spec's own, started with `EDGE_TEST_CLOCK=true` (`PUT
 * /v1/_test/clock`): the budget clock, which also stamps the usage of what they admit, so the
 * ledger, `GET /v1/key` and admission all see the moved time.
 */
import type { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { api, ApiResponse, createAccount, createDevPass, TestAccount } from './support/api';
import { startExtraEdge } from './support/processes';
import { storedKey } from './support/keys-db';
import { suiteInfo } from './support/suite-info';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let edges: { edge: ChildProcess; base: string }[] = [];
let db: Client;

beforeAll(async () => {
  edges = await Promise.all([
    startExtraEdge({ EDGE_TEST_CLOCK: 'true' }, 'budget-clock-edge-a'),
    startExtraEdge({ EDGE_TEST_CLOCK: 'true' }, 'budget-clock-edge-b'),
  ]);
  db = new Client({ connectionString: suiteInfo().env.DATABASE_URL });
  await db.connect();
}, 60_000);

afterAll(async () => {
  for (const { edge } of edges) edge.kill('SIGTERM');
  await db?.end();
});

/** Moves the budget clock of both edges to `at` (ms). */
async function moveClock(owner: TestAccount, at: number): Promise<void> {
  for (const { base } of edges) {
    const moved = await api('PUT', '/v1/_test/clock', { key: owner.masterKey, base, body: { at } });
    if (moved.status !== 200) throw new Error(`clock not moved: ${moved.status} ${moved.text}`);
  }
}

/** A short answer of the priced simulator: 5 output tokens at 10,000 credits per million, plus the prompt. */
const chat = (key: string, edge = 0) =>
  api('POST', '/v1/chat/completions', {
    key,
    base: edges[edge % edges.length].base,
    body: { model: 'sim-pricey', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
  });

async function createKey(owner: TestAccount, budgets: object[], fields: object = {}): Promise<{ key: string; id: string; record: any }> {
  const created = await api('POST', '/v1/auth/proxy/create', {
    key: owner.masterKey,
    base: edges[0].base,
    body: { name: 'windows', allocated_ammount: 100, budgets, ...fields },
  });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
  return { key: created.body.key, id: (await storedKey(created.body.key)).id, record: created.body };
}

/** The ledger's charges of a key, exact: their sum as a decimal string and how many, optionally since `from` (ms). */
async function charged(keyId: string, from = 0): Promise<{ total: string; count: number }> {
  const result = await db.query(
    `SELECT coalesce(sum(credits), 0)::text AS total, count(*)::int AS count FROM usage_logs
     WHERE key_id = $1 AND credits <> 0 AND created_at >= to_timestamp($2::bigint / 1000.0)`,
    [keyId, from],
  );
  return { total: result.rows[0].total, count: result.rows[0].count };
}

/** Whether `a <= b` for decimal strings, compared by PostgreSQL (exact). */
async function atMost(a: string, b: string | number): Promise<boolean> {
  return (await db.query('SELECT $1::numeric <= $2::numeric AS ok', [a, String(b)])).rows[0].ok;
}

/** How many answered requests of a key the ledger holds, charged or not (a DevPass key's cost nothing); refusals apart. */
async function recorded(keyId: string): Promise<number> {
  return (await db.query("SELECT count(*)::int AS count FROM usage_logs WHERE key_id = $1 AND status <> 'refused'", [keyId])).rows[0].count;
}

/** The request log's refused entries of the account (metering writes them asynchronously): waits for at least one. */
async function refusedEntries(owner: TestAccount): Promise<any[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const logs = await api('GET', '/v1/user/logs?status=refused', { key: owner.masterKey });
    expect(logs.status).toBe(200);
    if (logs.body.length > 0 || Date.now() > deadline) return logs.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the ledger holds `count` requests of the key (metering is asynchronous); answers its charges. */
async function ledgerHolds(keyId: string, count: number): Promise<{ total: string; count: number }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const held = await recorded(keyId);
    if (held >= count) return charged(keyId);
    if (Date.now() > deadline) throw new Error(`the ledger holds ${held} requests of ${keyId}, expected ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A refusal's message: chat completions answer OpenAI's error shape. */
const messageOf = (response: ApiResponse): string => response.body?.error?.message ?? response.body?.detail ?? response.text;

/** `GET /v1/key` through an edge of this spec (its clock), the budget of `period`. */
async function budgetOf(key: string, period: string): Promise<any> {
  const view = await api('GET', '/v1/key', { key, base: edges[1].base });
  expect(view.status).toBe(200);
  const budget = view.body.budgets.find((entry: any) => entry.period === period);
  if (!budget) throw new Error(`no ${period} budget in ${view.text}`);
  return budget;
}

/**
 * Sends requests one at a time until one is refused (402) with every earlier one settled: a refusal
 * while the last answer's charge is still on its way to the ledger (its worst case still reserved)
 * only says the window is nearly spent. Returns how many were answered and the final refusal.
 */
async function spendUntilRefused(
  key: string,
  keyId: string,
  { limit = 100, refused = 402, send = chat }: { limit?: number; refused?: number; send?: (key: string, edge: number) => Promise<ApiResponse> } = {},
): Promise<{ answered: number; refusal: ApiResponse }> {
  const settled = await recorded(keyId);
  let answered = 0;
  while (answered < limit) {
    const response = await send(key, answered);
    if (response.status === 200) {
      answered++;
      continue;
    }
    if (response.status !== refused) throw new Error(`unexpected ${response.status}: ${response.text}`);
    await ledgerHolds(keyId, settled + answered);
    const again = await send(key, answered);
    if (again.status === refused) return { answered, refusal: again };
    if (again.status !== 200) throw new Error(`unexpected ${again.status}: ${again.text}`);
    answered++;
  }
  throw new Error(`never refused after ${limit} requests`);
}

describe('budget windows: 5 hours and weekly on one key', () => {
  let owner: TestAccount;

  beforeAll(() => {
    owner = createAccount('pro', '1000');
  });

  it('never lets 200 concurrent requests across two edges spend more than the 5 h window, nor the week more than its 3', async () => {
    const monday = Date.UTC(2027, 0, 4, 1, 0, 0); // Monday 4 January 2027, 01:00 UTC
    const { key, id } = await createKey(owner, [
      { amount: 1, period: '5h' },
      { amount: 3, period: 'weekly' },
    ]);
    let answered = 0;
    const waves: { at: number; statuses: number[]; spent: string }[] = [];
    // A wave every 5 h and 1 minute: the 5 h window is free again each time, until the week's 3 run out.
    for (let wave = 0; wave < 4; wave++) {
      const at = monday + wave * (5 * HOUR + MINUTE);
      await moveClock(owner, at);
      const before = await charged(id);
      const responses = await Promise.all(Array.from({ length: 200 }, (_, index) => chat(key, index)));
      const statuses = responses.map((response) => response.status);
      // Any other status is shown with its body, to tell a refusal of the wrong kind from an outage.
      expect(
        responses
          .filter((response) => response.status !== 200 && response.status !== 402)
          .map((response) => `${response.status} ${response.text.slice(0, 200)}`),
      ).toEqual([]);
      answered += statuses.filter((status) => status === 200).length;
      await ledgerHolds(id, answered);
      const refusals = responses.filter((response) => response.status === 402);
      expect(refusals.length).toBeGreaterThan(0);
      for (const refusal of refusals) expect(messageOf(refusal)).toMatch(/Proxy key budget exhausted: .* of its (5h|weekly) budget/);
      // Then one request at a time, each after the last was settled, until refused: how much of the
      // window the wave's reservations (worst cases, held at once) left unspent is measured below.
      answered += (await spendUntilRefused(key, id)).answered;
      const after = await ledgerHolds(id, answered);
      const spent = (await db.query('SELECT ($1::numeric - $2::numeric)::text AS spent', [after.total, before.total])).rows[0].spent;
      waves.push({ at, statuses, spent });
      // Every wave stays within the 5 h window, and the week within its 3 credits, exactly.
      expect(await atMost(spent, 1)).toBe(true);
      expect(await atMost(after.total, 3)).toBe(true);
    }
    // The first three waves (with their top-up) each spend most of the 5 h window; the fourth finds the week spent.
    for (const wave of waves.slice(0, 3)) expect(Number(wave.spent)).toBeGreaterThan(0.8);
    const lastRefusal = messageOf(await chat(key));
    expect(lastRefusal).toContain('of its weekly budget of 3 credits (UTC); it frees room at 2027-01-11T00:00:00.000Z');
    const weekly = await budgetOf(key, 'weekly');
    const total = (await charged(id)).total;
    expect(weekly).toEqual({
      period: 'weekly',
      timezone: 'UTC',
      unit: 'credits',
      amount: 3,
      used: Number(total),
      remaining: Number((3 - Number(total)).toFixed(12)),
      resets_at: Date.UTC(2027, 0, 11) / 1000,
    });
  }, 180_000);

  it('frees a rolling window gradually, as each charge becomes 5 hours old', async () => {
    const start = Date.UTC(2027, 1, 1, 9, 0, 0);
    const { key, id } = await createKey(owner, [{ amount: 1, period: '5h' }]);
    await moveClock(owner, start);
    // About half the window now, the rest two hours later.
    let answered = 0;
    while (Number((await charged(id)).total) < 0.45) {
      expect((await chat(key, answered)).status).toBe(200);
      await ledgerHolds(id, ++answered);
    }
    const early = (await charged(id)).total;
    await moveClock(owner, start + 2 * HOUR);
    const { answered: later, refusal } = await spendUntilRefused(key, id);
    answered += later;
    expect(messageOf(refusal)).toContain('of its 5h budget of 1 credits (UTC)');
    const all = await ledgerHolds(id, answered);
    const lateSpend = (await charged(id, start + 2 * HOUR)).total;
    expect(await atMost(all.total, 1)).toBe(true);
    // The request log names the window that refused it, charging nothing (one entry a minute at most).
    const refused = (await refusedEntries(owner)).filter((entry) => entry.refused_by?.period === '5h');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused[0]).toMatchObject({
      status: 'refused',
      credits: 0,
      model: 'sim-pricey',
      route: 'chat.completions',
      refused_by: { period: '5h', timezone: 'UTC' },
    });
    // The oldest charge (09:00) leaves at 14:01, the end of its minute plus 5 hours.
    expect((await budgetOf(key, '5h')).resets_at).toBe((start + 5 * HOUR + MINUTE) / 1000);

    // At 14:01 the early half has left the window: what is left is exactly what the later requests did not use.
    await moveClock(owner, start + 5 * HOUR + MINUTE);
    const partly = await budgetOf(key, '5h');
    expect(partly.used).toBe(Number(lateSpend));
    expect(partly.remaining).toBe(Number((1 - Number(lateSpend)).toFixed(12)));
    expect(Number(early)).toBeGreaterThan(0);
    const freed = await chat(key);
    expect(freed.status).toBe(200);
    expect(freed.headers.get('x-budget-period')).toBe('5h');
    answered++;
    await ledgerHolds(id, answered);

    // Two hours on, the later requests have left too: only the one just made counts.
    await moveClock(owner, start + 7 * HOUR + 2 * MINUTE);
    const last = await budgetOf(key, '5h');
    const recent = (await charged(id, start + 5 * HOUR + MINUTE)).total;
    expect(last.used).toBe(Number(recent));
  }, 120_000);
});

describe('calendar windows in a time zone', () => {
  let owner: TestAccount;

  beforeAll(() => {
    owner = createAccount('pro', '1000');
  });

  it('resets a daily window at midnight in Asia/Kolkata (18:30 UTC)', async () => {
    const { key, id } = await createKey(owner, [{ amount: 0.5, period: 'daily', timezone: 'Asia/Kolkata' }]);
    const midnight = Date.UTC(2027, 2, 10, 18, 30, 0); // 11 March 2027, 00:00 IST
    await moveClock(owner, midnight - 10 * MINUTE);
    const { answered, refusal } = await spendUntilRefused(key, id);
    expect(answered).toBeGreaterThan(0);
    expect(messageOf(refusal)).toContain('of its daily budget of 0.5 credits (Asia/Kolkata); it frees room at 2027-03-10T18:30:00.000Z');
    const spent = await ledgerHolds(id, answered);
    expect(await atMost(spent.total, 0.5)).toBe(true);
    expect(await budgetOf(key, 'daily')).toMatchObject({ timezone: 'Asia/Kolkata', used: Number(spent.total), resets_at: midnight / 1000 });

    await moveClock(owner, midnight + MINUTE);
    expect(await budgetOf(key, 'daily')).toMatchObject({ used: 0, remaining: 0.5, resets_at: (midnight + 24 * HOUR) / 1000 });
    const next = await chat(key);
    expect(next.status).toBe(200);
    expect(next.headers.get('x-budget-period')).toBe('daily');
    expect(next.headers.get('x-budget-timezone')).toBe('Asia/Kolkata');
    expect(next.headers.get('x-budget-reset')).toBe(String((midnight + 24 * HOUR) / 1000));
  }, 120_000);

  it('keeps a daily Europe/Berlin window for the whole 25-hour day the clocks go back (25 October 2026)', async () => {
    const { key, id } = await createKey(owner, [{ amount: 0.5, period: 'daily', timezone: 'Europe/Berlin' }]);
    // The day began at 2026-10-24T22:00Z (midnight CEST) and ends at 2026-10-25T23:00Z (midnight CET).
    const dayStart = Date.UTC(2026, 9, 24, 22, 0, 0);
    const dayEnd = Date.UTC(2026, 9, 25, 23, 0, 0);
    await moveClock(owner, dayStart + 23 * HOUR + 50 * MINUTE);
    const { answered } = await spendUntilRefused(key, id);
    await ledgerHolds(id, answered);
    expect(await budgetOf(key, 'daily')).toMatchObject({ resets_at: dayEnd / 1000 });
    // 24 hours after the day began it is still that day in Berlin (23:30 CET): no room yet.
    await moveClock(owner, dayStart + 24 * HOUR + 30 * MINUTE);
    const still = await chat(key);
    expect(still.status).toBe(402);
    expect(messageOf(still)).toContain(`(Europe/Berlin); it frees room at ${new Date(dayEnd).toISOString()}`);
    await moveClock(owner, dayEnd + MINUTE);
    expect((await chat(key)).status).toBe(200);
    expect(await budgetOf(key, 'daily')).toMatchObject({ resets_at: (dayEnd + 24 * HOUR) / 1000 });
  }, 120_000);
});

describe('budgets on create, update, lookup and list', () => {
  let owner: TestAccount;

  beforeAll(() => {
    owner = createAccount('pro', '1000');
  });

  it('lists the allocation as one budget, then the windows, on create, lookup, list and GET /v1/key', async () => {
    const spec = await api('POST', '/v1/auth/proxy/create', {
      key: owner.masterKey,
      body: { name: 'spec only', allocated_ammount: 2, spend_window: 'daily' },
    });
    expect(spec.status).toBe(201);
    expect(spec.body.budgets).toEqual([{ period: 'daily', timezone: 'UTC', unit: 'credits', amount: 2, used: 0, remaining: 2, resets_at: expect.any(Number) }]);

    const { key, record } = await createKey(owner, [
      { amount: 1, period: '5h' },
      { amount: 3, period: 'weekly', timezone: 'Europe/Berlin' },
    ]);
    const expected = [
      { period: 'lifetime', timezone: 'UTC', unit: 'credits', amount: 100, used: 0, remaining: 100, resets_at: null },
      { period: '5h', timezone: 'UTC', unit: 'credits', amount: 1, used: 0, remaining: 1, resets_at: null },
      { period: 'weekly', timezone: 'Europe/Berlin', unit: 'credits', amount: 3, used: 0, remaining: 3, resets_at: expect.any(Number) },
    ];
    expect(record.budgets).toEqual(expected);
    const lookup = await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: key } });
    expect(lookup.body.budgets).toEqual(expected);
    const listed = await api('GET', '/v1/auth/proxy', { key: owner.masterKey });
    expect(listed.body.find((entry: any) => entry.key === key).budgets).toEqual(expected);
    expect((await api('GET', '/v1/key', { key })).body.budgets).toEqual(expected);

    // An update replaces the windows; [] removes them.
    const updated = await api('POST', '/v1/auth/proxy/update', { key: owner.masterKey, body: { proxy_key: key, budgets: [{ amount: 2, period: 'monthly' }] } });
    expect(updated.status).toBe(200);
    expect((await api('GET', '/v1/key', { key })).body.budgets.map((budget: any) => budget.period)).toEqual(['lifetime', 'monthly']);
    await api('POST', '/v1/auth/proxy/update', { key: owner.masterKey, body: { proxy_key: key, budgets: [] } });
    expect((await api('GET', '/v1/key', { key })).body.budgets.map((budget: any) => budget.period)).toEqual(['lifetime']);
  });

  it.each([
    ['an unknown period', [{ amount: 1, period: '3w' }], 'budgets[0].period'],
    [
      'duplicate periods',
      [
        { amount: 1, period: '5h' },
        { amount: 2, period: '5h' },
      ],
      'budgets[1].period',
    ],
    ['an unknown time zone', [{ amount: 1, period: 'daily', timezone: 'Europe/Atlantis' }], 'budgets[0].timezone'],
    ['a negative amount', [{ amount: -1, period: 'daily' }], 'budgets[0].amount'],
    ['9 windows', Array.from({ length: 9 }, (_, index) => ({ amount: 1, period: `${index + 1}h` })), 'budgets may hold at most 8'],
    ['the allocation window again', [{ amount: 1, period: 'weekly' }], 'budgets[0].period'],
  ])('refuses %s with a 400 naming the field, writing nothing', async (_case, budgets, field) => {
    const before = (await api('GET', '/v1/auth/proxy', { key: owner.masterKey })).body.length;
    const created = await api('POST', '/v1/auth/proxy/create', {
      key: owner.masterKey,
      body: { name: 'bad', allocated_ammount: 1, spend_window: 'weekly', budgets },
    });
    expect(created.status).toBe(400);
    expect(created.body.detail).toContain(field);
    expect((await api('GET', '/v1/auth/proxy', { key: owner.masterKey })).body.length).toBe(before);

    const key = (await api('POST', '/v1/auth/proxy/create', { key: owner.masterKey, body: { name: 'good', allocated_ammount: 1, spend_window: 'weekly' } }))
      .body.key;
    const updated = await api('POST', '/v1/auth/proxy/update', { key: owner.masterKey, body: { proxy_key: key, budgets } });
    expect(updated.status).toBe(400);
    expect(updated.body.detail).toContain(field);
    expect((await api('POST', '/v1/auth/proxy/lookup', { key: owner.masterKey, body: { proxy_key: key } })).body.budgets).toHaveLength(1);
  });
});

describe('DevPass token windows of the plan', () => {
  /** The suite gives the basic plan 5h = 2,000 tokens and weekly (Asia/Kolkata) = 3,000 (DEVPASS_TOKEN_WINDOWS). */
  const plain = (key: string, edge = 0) =>
    api('POST', '/v1/chat/completions', {
      key,
      base: edges[edge % edges.length].base,
      // About 100 tokens of prompt: a window is spent in a score of requests, well within the plan's 60 a minute.
      body: { model: 'sim-coder:dev', messages: [{ role: 'user', content: 'budget '.repeat(100) }], max_tokens: 60 },
    });

  /** The ledger's tokens of a key (input plus output), exactly. */
  const tokensOf = async (keyId: string): Promise<number> =>
    Number((await db.query('SELECT coalesce(sum(input_tokens + output_tokens), 0)::int AS tokens FROM usage_logs WHERE key_id = $1', [keyId])).rows[0].tokens);

  it('enforces and reports the token windows with a 429 naming the window, never touching credits', async () => {
    const owner = createAccount('basic', '7');
    const devKey = createDevPass(owner.accountId);
    const { id } = await storedKey(devKey);
    const start = Date.UTC(2027, 4, 3, 3, 0, 0); // Monday 3 May 2027, 08:30 in Kolkata
    await moveClock(owner, start);
    const view = await api('GET', '/v1/key', { key: devKey, base: edges[0].base });
    expect(view.body.budgets).toEqual([
      { period: '5h', timezone: 'UTC', unit: 'tokens', amount: 2000, used: 0, remaining: 2000, resets_at: null },
      { period: 'weekly', timezone: 'Asia/Kolkata', unit: 'tokens', amount: 3000, used: 0, remaining: 3000, resets_at: Date.UTC(2027, 4, 9, 18, 30) / 1000 },
    ]);

    const first = await spendUntilRefused(devKey, id, { refused: 429, send: plain });
    expect(first.answered).toBeGreaterThan(0);
    expect(messageOf(first.refusal)).toContain("of its plan's 5h window of 2000 tokens (UTC)");
    expect(Number(first.refusal.headers.get('retry-after'))).toBeGreaterThan(4 * 3600);
    const spent = await tokensOf(id);
    expect(spent).toBeLessThanOrEqual(2000);
    expect(spent).toBeGreaterThan(2000 - 200);
    expect((await budgetOf(devKey, '5h')).used).toBe(spent);

    // Five hours on, the 5 h window is free again, but the week holds only 3,000.
    await moveClock(owner, start + 5 * HOUR + MINUTE);
    const second = await spendUntilRefused(devKey, id, { refused: 429, send: plain });
    expect(second.answered).toBeGreaterThan(0);
    expect(messageOf(second.refusal)).toContain("of its plan's weekly window of 3000 tokens (Asia/Kolkata); it frees room at 2027-05-09T18:30:00.000Z");
    expect(await tokensOf(id)).toBeLessThanOrEqual(3000);
    expect((await refusedEntries(owner)).map((entry) => entry.refused_by)).toEqual(
      expect.arrayContaining([
        { period: '5h', timezone: 'UTC' },
        { period: 'weekly', timezone: 'Asia/Kolkata' },
      ]),
    );
    // DevPass usage never touches credits.
    expect((await api('GET', '/v1/user/me', { key: owner.masterKey })).body.credits).toBe(7);
  }, 120_000);
});
