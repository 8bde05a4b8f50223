/** `GET /v1/models` through the OpenAI client, as each kind of key sees it. */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { api, createAccount, createDevPass, createProxyKey, TestAccount } from '../support/api';
import { openaiClient } from '../support/clients';
import { suiteInfo } from '../support/suite-info';

interface CatalogEntry {
  id: string;
  name?: string;
  owned_by?: string;
  pricing: { input: number; output: number };
  endpoints: string[];
  tokens?: number;
}

function catalog(): CatalogEntry[] {
  return (parse(readFileSync(suiteInfo().modelsConfig, 'utf8')) as { models: CatalogEntry[] }).models;
}

async function listIds(key: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const model of openaiClient(key).models.list()) ids.push(model.id);
  return ids;
}

describe('GET /v1/models', () => {
  let account: TestAccount;
  let devKey: string;

  beforeAll(() => {
    account = createAccount('pro', '100');
    devKey = createDevPass(account.accountId);
  });

  it('shows a master key the whole catalog except the coding-plan (:dev) models, with their listing fields', async () => {
    const expected = catalog()
      .map((model) => model.id)
      .filter((id) => !id.endsWith(':dev'));
    const page = await openaiClient(account.masterKey).models.list();
    const models = page.data;
    expect(models.map((model) => model.id).sort()).toEqual([...expected].sort());
    expect(models.every((model) => model.object === 'model')).toBe(true);
    const simChat = models.find((model) => model.id === 'sim-chat') as any;
    const configured = catalog().find((model) => model.id === 'sim-chat')!;
    expect(simChat).toMatchObject({
      id: 'sim-chat',
      object: 'model',
      name: configured.name,
      owned_by: configured.owned_by,
      pricing: configured.pricing,
      endpoints: configured.endpoints,
      tokens: configured.tokens,
    });
    // Routes, upstream names and provider keys are the operator's business.
    const raw = await api('GET', '/v1/models', { key: account.masterKey });
    expect(raw.body.object).toBe('list');
    expect(raw.text).not.toMatch(/routes|upstream_model|api_key_env|base_url|127\.0\.0\.1/);
  });

  it('shows a DevPass key only the :dev models', async () => {
    const ids = await listIds(devKey);
    const expected = catalog()
      .map((model) => model.id)
      .filter((id) => id.endsWith(':dev'));
    expect(expected.length).toBeGreaterThan(0);
    expect(ids.sort()).toEqual(expected.sort());
  });

  it('shows a proxy key with a model whitelist only those models', async () => {
    const proxy = await createProxyKey(account.masterKey, { model_whitelist: ['sim-chat', 'fake-openai'] });
    expect((await listIds(proxy.key)).sort()).toEqual(['fake-openai', 'sim-chat']);
    const open = await createProxyKey(account.masterKey);
    expect(await listIds(open.key)).toEqual(expect.arrayContaining(['sim-chat', 'sim-reasoner', 'fake-anthropic']));
    expect((await listIds(open.key)).some((id) => id.endsWith(':dev'))).toBe(false);
  });
});
