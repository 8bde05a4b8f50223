/**
 * The operators' CLI sets and shows a proxy key's budget windows (`proxy budgets`): what it shows is
 * what `GET /v1/key` shows the key's holder, a change reaches the edges at once (their cached
 * principal is dropped by the key-change event), and a bad `--set` is refused as the API refuses
 * `budgets`, naming the field, with nothing written.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { api, createAccount, createProxyKey, TestAccount } from './support/api';
import { suiteInfo } from './support/suite-info';

interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The operators' CLI, as `npm run admin -- …` runs it, with the suite's environment. */
function admin(args: string[], env: Record<string, string> = {}): CliRun {
  const entry = join(suiteInfo().root, 'dist/apps/key-service/src/cli/admin.cli.js');
  const run = spawnSync(process.execPath, [entry, ...args], { env: { ...suiteInfo().env, ...env }, encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** `admin … --json`, which must succeed: its JSON answer. */
function adminJson(args: string[]): any {
  const run = admin([...args, '--json']);
  if (run.status !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop() as string);
}

const chat = (key: string, base = suiteInfo().edgeA) =>
  api('POST', '/v1/chat/completions', { key, base, body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });

/**
 * Both edges answer from their key cache: a key's first answer is not cached (its account is not
 * known yet), the second is (AUTH_CACHE_TTL_SECONDS is 300 in this suite).
 */
async function warmEdges(key: string): Promise<void> {
  for (const base of [suiteInfo().edgeA, suiteInfo().edgeB]) {
    for (let i = 0; i < 2; i++) expect((await chat(key, base)).status).toBe(200);
  }
}

describe('admin CLI: proxy budgets', () => {
  let owner: TestAccount;
  let key: string;
  const budgetsArgs = () => ['proxy', 'budgets', '--account', owner.accountId, '--key', key];
  const selfView = async (): Promise<any[]> => {
    const view = await api('GET', '/v1/key', { key });
    expect(view.status).toBe(200);
    return view.body.budgets;
  };

  beforeAll(async () => {
    owner = createAccount('pro', '100');
    key = (await createProxyKey(owner.masterKey, { allocated_ammount: 5, spend_window: 'weekly' })).key;
  });

  it('shows the allocation of a key without windows, as GET /v1/key does', async () => {
    const shown = adminJson(budgetsArgs());
    expect(shown).toMatchObject({ account_id: owner.accountId, updated: false });
    expect(shown.masked_key.endsWith(key.slice(-4))).toBe(true);
    expect(shown.budgets).toEqual([expect.objectContaining({ period: 'weekly', timezone: 'UTC', amount: 5, used: 0, remaining: 5 })]);
    expect(shown.budgets).toEqual(await selfView());
  });

  it('replaces the windows with --set; the CLI and GET /v1/key read them back', async () => {
    const windows = [
      { amount: 2, period: '5h' },
      { amount: 3.5, period: 'monthly', timezone: 'Europe/Berlin' },
    ];
    const set = adminJson([...budgetsArgs(), '--set', JSON.stringify(windows)]);
    expect(set.updated).toBe(true);
    expect(set.budgets.map((b: any) => [b.period, b.timezone, b.amount, b.remaining])).toEqual([
      ['weekly', 'UTC', 5, 5],
      ['5h', 'UTC', 2, 2],
      ['monthly', 'Europe/Berlin', 3.5, 3.5],
    ]);
    expect(adminJson(budgetsArgs()).budgets).toEqual(set.budgets);
    expect(await selfView()).toEqual(set.budgets);

    // The text output: one row per budget.
    const text = admin(budgetsArgs());
    expect(text.status).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toContain(`account ${owner.accountId}`);
    expect(lines[1].split(/\s+/)).toEqual(['period', 'timezone', 'amount', 'used', 'remaining', 'resets', 'at']);
    expect(lines.slice(2).map((line) => line.split(/\s+/).slice(0, 5))).toEqual([
      ['weekly', 'UTC', '5', '0', '5'],
      ['5h', 'UTC', '2', '0', '2'],
      ['monthly', 'Europe/Berlin', '3.5', '0', '3.5'],
    ]);
  });

  it('takes effect on the edge for the very next request, and [] removes the windows', async () => {
    await warmEdges(key);
    adminJson([...budgetsArgs(), '--set', '[{"amount":0,"period":"daily"}]']);
    for (const base of [suiteInfo().edgeA, suiteInfo().edgeB]) {
      const refused = await chat(key, base);
      expect(refused.status).toBe(402);
      expect(refused.body.error.message).toContain('daily budget of 0 credits (UTC)');
    }

    const removed = adminJson([...budgetsArgs(), '--set', '[]']);
    expect(removed.budgets.map((b: any) => b.period)).toEqual(['weekly']);
    expect((await selfView()).map((b: any) => b.period)).toEqual(['weekly']);
    expect((await chat(key)).status).toBe(200);
    expect((await chat(key, suiteInfo().edgeB)).status).toBe(200);
  });

  // The edges then hold the key's old principal until AUTH_CACHE_TTL_SECONDS pass (or the next key change).
  it('keeps the change when the edges cannot be told (NATS unreachable), saying so on stderr', async () => {
    const run = admin([...budgetsArgs(), '--set', '[{"amount":0,"period":"daily"}]', '--json'], { NATS_URL: 'nats://127.0.0.1:1' });
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('could not publish keys.changed (proxy_updated)');
    expect(JSON.parse(run.stdout).budgets.map((b: any) => b.period)).toEqual(['weekly', 'daily']);
    expect((await selfView()).map((b: any) => b.period)).toEqual(['weekly', 'daily']);
    adminJson([...budgetsArgs(), '--set', '[]']);
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
    ['the allocation window again', [{ amount: 1, period: 'weekly' }], 'budgets[0].period'],
  ])('refuses %s as a usage error naming the field, writing nothing', async (_case, windows, field) => {
    adminJson([...budgetsArgs(), '--set', '[{"amount":4,"period":"quarterly"}]']);
    const before = await selfView();
    for (const json of [[], ['--json']]) {
      const run = admin([...budgetsArgs(), '--set', JSON.stringify(windows), ...json]);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.split('\n')[0]).toContain(field);
      expect(run.stderr).toContain('usage: npm run admin');
    }
    expect(await selfView()).toEqual(before);
    expect(adminJson(budgetsArgs()).budgets).toEqual(before);
  });

  it('refuses a --set that is not JSON, and a key of another account', async () => {
    const notJson = admin([...budgetsArgs(), '--set', '{amount: 1']);
    expect(notJson.status).toBe(2);
    expect(notJson.stderr).toContain('--set must be a JSON list');

    const stranger = createAccount('pro', '1');
    const foreign = admin(['proxy', 'budgets', '--account', stranger.accountId, '--key', key, '--set', '[]', '--json']);
    expect(foreign.status).toBe(1);
    expect(foreign.stderr).toContain('Proxy key not found');
    expect((await selfView()).map((b: any) => b.period)).toEqual(['weekly', 'quarterly']);
  });
});
