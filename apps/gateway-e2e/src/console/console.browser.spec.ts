/**
 * The web console in Chromium against the running suite: sign-in by session, proxy keys made and
 * switched off from the Keys page, Logs filtered, opened and exported, the overview chart against the
 * ledger, a proxy key's own session, the playground; no key kept by the page, no CSP report, no serious
 * accessibility violation; screenshots of every page for docs/console.md.
 */
import { DateTime } from 'luxon';
import { readFileSync } from 'node:fs';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { api, createAccount, TestAccount } from '../support/api';
import { suiteInfo } from '../support/suite-info';
import { launchChromium, screenshots, seriousViolations, until, VIEWPORTS, watchCsp } from './console-browser';

jest.setTimeout(120_000);

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const ZONE = 'Asia/Kolkata';

let browser: Browser;
let account: TestAccount;
let master: { context: BrowserContext; page: Page; csp: string[] };
const proxy: { key: string; id?: string; name: string; requestIds: string[] } = { key: '', name: 'browser-ci', requestIds: [] };

const url = (path = '') => `${suiteInfo().edgeA}/console${path}`;

async function newContext(): Promise<{ context: BrowserContext; page: Page; csp: string[] }> {
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop, acceptDownloads: true });
  const page = await context.newPage();
  return { context, page, csp: watchCsp(page) };
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(url('/'));
  await page.waitForURL(/\/console\/sign-in$/);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

/** Opens a page from the navigation bar, as a user would. */
async function open(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
}

/** Every log entry of `key` matching `filters` (all pages). */
async function ledger(key: string, filters = ''): Promise<any[]> {
  const entries: any[] = [];
  let cursor = '';
  for (;;) {
    const response = await api('GET', `/v1/user/logs?limit=500${filters}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key });
    if (response.status !== 200) throw new Error(`/v1/user/logs answered ${response.status}: ${response.text.slice(0, 200)}`);
    entries.push(...response.body);
    cursor = response.headers.get('x-next-cursor') ?? '';
    if (!cursor) return entries;
  }
}

/** Nothing the page can read holds the key: storage, cookies visible to scripts, the address. */
async function expectNoKeyInPage(page: Page, key: string): Promise<void> {
  // Runs in the page (this file is compiled without the DOM's types).
  const seen = await page.evaluate(() => {
    const window = globalThis as any;
    return {
      local: JSON.stringify({ ...window.localStorage }),
      session: JSON.stringify({ ...window.sessionStorage }),
      cookie: String(window.document.cookie),
      href: String(window.location.href),
    };
  });
  expect(Object.values(seen).filter((value) => value.includes(key) || value.includes(key.slice(-12)))).toEqual([]);
}

async function checkPage(page: Page, name: string): Promise<void> {
  expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
  await screenshots(page, name);
}

beforeAll(async () => {
  browser = await launchChromium();
  account = createAccount('pro', '100');
  master = await newContext();
});

afterAll(async () => {
  await browser?.close();
});

describe('the console as served', () => {
  it('is index.html with its CSP and no inline script or style; assets are immutable; unknown files are 404', async () => {
    const page = await fetch(url('/logs?model=x'));
    expect(page.status).toBe(200);
    expect(
      Object.fromEntries(
        ['content-security-policy', 'x-content-type-options', 'referrer-policy', 'cache-control'].map((name) => [name, page.headers.get(name)]),
      ),
    ).toEqual({
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    });
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(html).not.toMatch(/<style|\sstyle=/i);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//i);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toMatch(/-[\w-]{6,}\.js$/);
    const asset = await fetch(`${suiteInfo().edgeA}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(url('/assets/nothing-here.js'))).status).toBe(404);
  });

  it.each([['/assets/..%2f..%2fpackage.json'], ['/assets/%2e%2e/index.html'], ['/assets/..%5cindex.html'], ['/assets/']])(
    'refuses %s with a 4xx in the error shape, never a file from outside the assets or a 500',
    async (path) => {
      const response = await fetch(url(path));
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      const body = (await response.json()) as { error: { message: string; type: string } };
      expect(body.error.type).toMatch(/_error$/);
      expect(JSON.stringify(body)).not.toContain('model-gateway');
    },
  );
});

describe('the console in a browser', () => {
  it('signs in with the master key, keeping no key in the page', async () => {
    const { page } = master;
    await page.goto(url('/sign-in'));
    const field = page.getByLabel('API key');
    expect(await field.getAttribute('type')).toBe('password');
    await checkPage(page, 'sign-in');
    await signIn(page, account.masterKey);
    await page.getByTestId('credits').filter({ hasText: /\d/ }).waitFor();
    expect(await page.getByTestId('plan').textContent()).toBe('pro');
    await expectNoKeyInPage(page, account.masterKey);
    // A reload keeps the session (the cookie) and reads the CSRF token again.
    await page.reload();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await expectNoKeyInPage(page, account.masterKey);
  });

  it('creates a proxy key with two budget windows and an IP allowlist, shown once', async () => {
    const { page } = master;
    await open(page, 'Keys');
    await page.getByRole('button', { name: 'Create proxy key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create proxy key' });
    await dialog.getByLabel('Name').fill(proxy.name);
    await dialog.getByLabel('Allocation (credits)').fill('5');
    for (const [index, [amount, period, zone]] of [
      ['1', '5h', 'UTC'],
      ['3', 'weekly', ZONE],
    ].entries()) {
      await dialog.getByRole('button', { name: 'Add budget window' }).click();
      await dialog.getByLabel(`Amount ${index + 1}`).fill(amount);
      await dialog.getByLabel(`Period ${index + 1}`).fill(period);
      await dialog.getByLabel(`Time zone ${index + 1}`).fill(zone);
    }
    // A third row, removed again.
    await dialog.getByRole('button', { name: 'Add budget window' }).click();
    await dialog.getByRole('button', { name: 'Remove budget window 3' }).click();
    await dialog.getByLabel(/^IP allowlist/).fill('127.0.0.0/8\n::1');
    await checkPage(page, 'keys-create');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'Proxy key created' }).getByTestId('new-key');
    await shown.waitFor();
    proxy.key = (await shown.textContent()) ?? '';
    expect(proxy.key).toMatch(/^ek-proxy-/);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.locator(`tr[data-key-name="${proxy.name}"]`).waitFor();
    await expectNoKeyInPage(page, proxy.key);
    await checkPage(page, 'keys');

    const records = await api('GET', '/v1/auth/proxy', { key: account.masterKey });
    const record = records.body.find((candidate: any) => candidate.key === proxy.key);
    proxy.id = record.id;
    expect(record).toMatchObject({ name: proxy.name, allocated_ammount: 5, is_active: true, ip_whitelist: ['127.0.0.0/8', '::1'], expires_at: -1 });
    expect(record.budgets.map((budget: any) => [budget.period, budget.timezone, budget.amount])).toEqual([
      ['lifetime', 'UTC', 5],
      ['5h', 'UTC', 1],
      ['weekly', ZONE, 3],
    ]);
  });

  it('shows the requests made with that key in Logs filtered by it, their details, and exports the same entries as CSV', async () => {
    for (const content of ['one', 'two', 'three']) {
      const response = await api('POST', '/v1/chat/completions', {
        key: proxy.key,
        body: { model: 'sim-chat', messages: [{ role: 'user', content }], max_tokens: 20 },
      });
      expect(response.status).toBe(200);
      proxy.requestIds.push(response.headers.get('x-request-id') as string);
    }
    const entries = await until(
      'the ledger entries of the proxy key',
      () => ledger(proxy.key),
      (found) => found.length === 3,
    );

    const { page } = master;
    await open(page, 'Logs');
    const keyFilter = page.getByLabel('Key', { exact: true });
    await keyFilter.locator('option', { hasText: proxy.name }).waitFor({ state: 'attached' });
    await keyFilter.selectOption((await keyFilter.locator('option', { hasText: proxy.name }).getAttribute('value')) as string);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/key_id=/);
    const rows = page.locator('tr[data-request-id]');
    await until(
      'three rows, the proxy key’s',
      () => rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-request-id'))),
      (ids) => ids.length === 3,
    );
    expect((await rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-request-id')))).sort()).toEqual([...proxy.requestIds].sort());
    // The filter is in the URL: a reload shows the same view.
    await page.reload();
    await until(
      'three rows after a reload',
      () => rows.count(),
      (count) => count === 3,
    );

    const first = entries[0];
    await page.getByRole('button', { name: `Details of ${first.request_id}` }).click();
    const detail = page.getByRole('dialog', { name: 'Request details' }).getByTestId('log-detail');
    await detail.waitFor();
    const text = (await detail.textContent()) ?? '';
    for (const value of [first.request_id, first.route, first.status, first.ip, String(first.input_tokens), String(first.output_tokens)])
      expect(text).toContain(value);
    expect(text).toMatch(/Cache reads/);
    expect(text).toMatch(/Cache writes/);
    await checkPage(page, 'logs-detail');
    await page.keyboard.press('Escape');
    await detail.waitFor({ state: 'detached' });
    await checkPage(page, 'logs');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = readFileSync((await download.path()) as string, 'utf8')
      .trim()
      .split(/\r?\n/);
    const header = csv[0].split(',').map((name) => name.replace(/"/g, ''));
    const idColumn = header.indexOf('request_id');
    expect(idColumn).toBeGreaterThanOrEqual(0);
    const exported = csv.slice(1).map((line) => line.split(',')[idColumn].replace(/"/g, ''));
    expect(exported.sort()).toEqual(entries.map((entry) => entry.request_id).sort());
    const direct = await api('GET', `/v1/user/logs/export?key_id=${encodeURIComponent(proxy.id ?? '')}`, { key: account.masterKey });
    expect(direct.text.trim().split(/\r?\n/)).toEqual(csv);
  });

  it('streams a chat from the playground, which then appears in the logs; the decision form answers', async () => {
    const { page } = master;
    await open(page, 'Playground');
    await page.getByLabel('Model', { exact: true }).selectOption('sim-long');
    await page.getByLabel('Message').fill('Tell me a long story.');
    await page.getByRole('button', { name: 'Send' }).click();
    const output = page.getByTestId('chat-output');
    // Streamed: text shows while the answer is still coming.
    await page.locator('[data-testid="chat-output"][data-state="streaming"]').filter({ hasText: /\w+/ }).waitFor();
    await page.locator('[data-testid="chat-output"][data-state="done"]').waitFor({ timeout: 30_000 });
    expect(((await output.textContent()) ?? '').split(/\s+/).length).toBeGreaterThan(20);
    const requestId = (await page.getByTestId('chat-request-id').textContent()) as string;
    expect(requestId).toMatch(/^req_/);

    await page.getByLabel('State (the facts)').fill('The basket holds a banana.');
    await page.getByRole('button', { name: 'Decide' }).click();
    await page.getByTestId('decision-output').filter({ hasText: 'answers' }).waitFor({ timeout: 30_000 });
    await checkPage(page, 'playground');

    await page.goto(url(`/logs?request_id=${requestId}`));
    await page.locator(`tr[data-request-id="${requestId}"]`).waitFor();
  });

  it("shows today's totals in Asia/Kolkata as the ledger has them", async () => {
    const { page } = master;
    await open(page, 'Settings');
    await page.getByLabel('Reporting time zone (IANA)').fill(ZONE);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: ZONE }).waitFor();
    await checkPage(page, 'settings');
    expect(await page.evaluate(() => (globalThis as any).localStorage.getItem('console.timezone'))).toBe(ZONE);

    const since = Math.floor(DateTime.now().setZone(ZONE).startOf('day').toSeconds());
    // Every request so far has reached the ledger: the proxy key's three, the chat, the decision.
    const entries = await until(
      'the account’s entries in the ledger',
      () => ledger(account.masterKey, `&since=${since}`),
      (found) => found.length >= 5,
    );
    const served = entries.filter((entry) => entry.status !== 'refused');
    const credits = served.reduce((sum, entry) => sum + entry.credits, 0);

    await open(page, 'Overview');
    await page.getByLabel('Range', { exact: true }).selectOption('today');
    await page.getByText(`Time zone ${ZONE}`).waitFor();
    const totals = await until(
      'the overview totals',
      async () => ({ requests: await page.getByTestId('total-requests').textContent(), credits: await page.getByTestId('total-credits').textContent() }),
      (value) => Number(value.requests) === served.length,
    );
    expect(Math.abs(Number(totals.credits) - credits)).toBeLessThan(1e-9);
    expect(Number(await page.getByTestId('total-input-tokens').textContent())).toBe(served.reduce((sum, entry) => sum + (entry.input_tokens ?? 0), 0));
    // The chart drew its bars (Recharts under the CSP: styles from scripts only).
    await page.locator('.recharts-bar-rectangle').first().waitFor();
    await checkPage(page, 'overview');
    await open(page, 'Models');
    await page.locator('tr[data-model="sim-chat"]').waitFor();
    await checkPage(page, 'models');
  });

  it('gives a proxy-key session its own data only, and no Keys page; switching the key off ends that session', async () => {
    const other = await newContext();
    try {
      await signIn(other.page, proxy.key);
      await expectNoKeyInPage(other.page, proxy.key);
      const nav = other.page.getByRole('navigation', { name: 'Console' });
      await nav.getByRole('link', { name: 'Logs', exact: true }).waitFor();
      expect(await nav.getByRole('link', { name: 'Keys', exact: true }).count()).toBe(0);
      await other.page.goto(url('/keys'));
      await other.page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      expect(new URL(other.page.url()).pathname).toBe('/console/');
      await other.page.getByTestId('budget-remaining-weekly').waitFor();

      await open(other.page, 'Logs');
      const rows = other.page.locator('tr[data-request-id]');
      await until(
        'the proxy key’s own rows',
        () => rows.count(),
        (count) => count === 3,
      );
      expect((await rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-request-id')))).sort()).toEqual([...proxy.requestIds].sort());
      expect(await other.page.getByLabel('Key', { exact: true }).count()).toBe(0);
      await screenshots(other.page, 'logs-proxy');

      // The master's Keys page switches the key off; the proxy session's next call ends it.
      await open(master.page, 'Keys');
      await master.page.getByRole('button', { name: `Turn off ${proxy.name}` }).click();
      await master.page.getByRole('button', { name: `Turn on ${proxy.name}` }).waitFor();
      // The Logs page refreshes itself while visible: its next call is refused and the app goes back to sign-in.
      await other.page.bringToFront();
      await other.page.waitForURL(/\/console\/sign-in$/, { timeout: 20_000 });
      await other.page.getByLabel('API key').waitFor();
      expect(other.csp).toEqual([]);
    } finally {
      await other.context.close();
    }
  });

  it('deletes every proxy key after a typed confirmation, and regenerates the master key, shown once', async () => {
    const { page } = master;
    await open(page, 'Keys');
    await page.getByRole('button', { name: 'Delete all proxy keys' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete all proxy keys' });
    const confirm = dialog.getByRole('button', { name: 'Delete every proxy key' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Confirmation').fill('delete all keys');
    await confirm.click();
    await page.getByText('No proxy keys yet.').waitFor();
    expect((await api('GET', '/v1/auth/proxy', { key: account.masterKey })).body).toEqual([]);

    await page.getByRole('button', { name: 'Regenerate master key' }).click();
    await page.getByRole('dialog', { name: 'Regenerate master key' }).getByRole('button', { name: 'Regenerate' }).click();
    const shown = page.getByRole('dialog', { name: 'New master key' }).getByTestId('new-key');
    await shown.waitFor();
    const newKey = (await shown.textContent()) as string;
    expect(newKey).not.toBe(account.masterKey);
    expect((await api('GET', '/v1/key', { key: account.masterKey })).status).toBe(401);
    await page.getByRole('button', { name: 'Done' }).click();
    // This session follows the new key: it goes on, showing the new key's masked value.
    await page
      .getByTestId('session-key')
      .filter({ hasText: newKey.slice(-4) })
      .waitFor();
    await open(page, 'Overview');
    await expectNoKeyInPage(page, newKey);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/console\/sign-in$/);
    await signIn(page, newKey);
    await expectNoKeyInPage(page, newKey);
    expect(master.csp).toEqual([]);
  });
});
