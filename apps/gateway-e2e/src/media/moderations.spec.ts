/** `POST /v1/moderations` through the official `openai` client, from the simulator and an OpenAI-compatible upstream. */
import { api, createAccount, createProxyKey, TestAccount } from '../support/api';
import { fakeRequestsMentioning, marker, openaiClient } from '../support/clients';
import { FAKE_FLAG_WORD } from '../support/fake-openai-media';

const CATEGORIES = [
  'sexual',
  'hate',
  'harassment',
  'self-harm',
  'sexual/minors',
  'hate/threatening',
  'violence/graphic',
  'self-harm/intent',
  'self-harm/instructions',
  'harassment/threatening',
  'violence',
].sort();

describe('POST /v1/moderations', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '100');
  });

  it("classifies a string with the default model: all 11 categories, flagged by the simulator's keywords", async () => {
    const result = await openaiClient(account.masterKey).moderations.create({ input: 'I will attack and kill them' });
    expect(result.id).toMatch(/^modr-/);
    expect(result.model).toBe('sim-moderation');
    expect(result.results).toHaveLength(1);
    const [verdict] = result.results;
    expect(Object.keys(verdict.categories).sort()).toEqual(CATEGORIES);
    expect(Object.keys(verdict.category_scores).sort()).toEqual(CATEGORIES);
    expect(verdict.flagged).toBe(true);
    expect(verdict.categories.violence).toBe(true);
    expect(verdict.category_scores.violence).toBeCloseTo(0.96, 10);
    expect(verdict.categories.sexual).toBe(false);
    expect(verdict.category_scores.sexual).toBeLessThan(1e-4);
  });

  it('answers one result per array item, in order', async () => {
    const result = await openaiClient(account.masterKey).moderations.create({
      model: 'text-moderation-latest',
      input: ['a sunny afternoon', 'you worthless idiot', '', 'the movie was pure gore'],
    });
    expect(result.model).toBe('text-moderation-latest');
    expect(result.results.map((verdict) => verdict.flagged)).toEqual([false, true, false, true]);
    expect(result.results[1].categories.harassment).toBe(true);
    expect(result.results[3].categories['violence/graphic']).toBe(true);
    expect(result.results[3].categories.violence).toBe(true);
    const stable = await openaiClient(account.masterKey).moderations.create({ model: 'text-moderation-stable', input: 'you worthless idiot' });
    expect(stable.results[0]).toEqual(result.results[1]);
  });

  it("relays an OpenAI-compatible upstream, keeping the spec's 11 categories", async () => {
    const mk = marker('mod');
    const result = await openaiClient(account.masterKey).moderations.create({
      model: 'fake-openai-moderation',
      input: [`fine ${mk}`, `${FAKE_FLAG_WORD} ${mk}`],
    });
    expect(result.model).toBe('fake-openai-moderation');
    expect(result.id).toMatch(/^modr-fake/);
    expect(result.results.map((verdict) => verdict.flagged)).toEqual([false, true]);
    expect(result.results[1].categories.harassment).toBe(true);
    expect(result.results[1].category_scores.harassment).toBe(0.93);
    for (const verdict of result.results) expect(Object.keys(verdict.categories).sort()).toEqual(CATEGORIES);
    const [sent] = await fakeRequestsMentioning('openai', mk);
    expect(sent.path).toBe('/v1/moderations');
    expect(sent.body).toEqual({ model: 'moderate', input: [`fine ${mk}`, `${FAKE_FLAG_WORD} ${mk}`] });
  });

  it("checks the default model against a proxy key's whitelist", async () => {
    const limited = await createProxyKey(account.masterKey, { model_whitelist: ['sim-chat'] });
    const refused = await api('POST', '/v1/moderations', { key: limited.key, body: { input: 'hello' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ param: 'model', message: expect.stringContaining('sim-moderation') });
    const allowed = await createProxyKey(account.masterKey, { model_whitelist: ['sim-moderation'] });
    expect((await api('POST', '/v1/moderations', { key: allowed.key, body: { input: 'hello' } })).status).toBe(200);
  });
});
