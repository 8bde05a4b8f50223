import { api, createAccount, createDevPass, createProxyKey, sleep, TestAccount } from '../support/api';

const QUESTIONS = {
  pick: { type: 'choice', instructions: 'Which fruit is yellow?', criteria: { apple: 'a red fruit', banana: 'a yellow fruit', grape: null } },
  rate: { type: 'score', instructions: 'How ripe is it?', criteria: ['unripe', 'ripe', 'overripe'] },
  fresh: { type: 'noul', instructions: 'Is it fresh?' },
};
const decide = (key: string, body: unknown, path = '/v1/systemone') => api('POST', path, { key, body });

describe('decisions (jev)', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '10');
  });

  it('describes the model without a key on GET /v1/systemone and /v1/decisions', async () => {
    for (const path of ['/v1/systemone', '/v1/decisions']) {
      const response = await api('GET', path);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        object: 'decision.model',
        model: 'jev',
        context_length: 32000,
        question_types: ['choice', 'score', 'noul'],
        pricing: { input: 0.042, output: 0, unit: 'credits per million tokens' },
      });
    }
  });

  it("answers every question type with the spec's fields", async () => {
    const response = await decide(account.masterKey, { state: { basket: ['banana'] }, questions: QUESTIONS });
    expect(response.status).toBe(200);
    const { body } = response;
    expect(body).toMatchObject({ object: 'decision', model: 'jev', id: expect.any(String) });
    expect(body.usage.output_tokens).toBe(0);
    expect(body.usage.input_tokens).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBe(body.usage.input_tokens);

    const pick = body.answers.pick;
    expect(pick.type).toBe('choice');
    expect(['apple', 'banana', 'grape']).toContain(pick.choice);
    expect(Object.keys(pick.probabilities).sort()).toEqual(['apple', 'banana', 'grape']);
    const total = Object.values(pick.probabilities as Record<string, number>).reduce((sum, p) => sum + p, 0);
    expect(Math.abs(total - 1)).toBeLessThanOrEqual(0.02);
    for (const p of Object.values(pick.probabilities as Record<string, number>)) expect(Number((p * 100).toFixed(6)) % 1).toBe(0);
    if ('confidence' in pick) expect(pick.confidence).toBeGreaterThanOrEqual(0);

    const rate = body.answers.rate;
    expect(rate.type).toBe('score');
    expect(rate.score).toBeGreaterThanOrEqual(0);
    expect(rate.score).toBeLessThanOrEqual(2);
    expect(rate.legend).toEqual({ 0: 'unripe', 1: 'ripe', 2: 'overripe' });
    expect(Object.keys(rate.probabilities).sort()).toEqual(['0', '1', '2']);

    const fresh = body.answers.fresh;
    expect(fresh).toEqual({ type: 'noul', noul: expect.any(Number) });
    expect(fresh.noul).toBeGreaterThanOrEqual(0);
    expect(fresh.noul).toBeLessThanOrEqual(1);

    const alias = await decide(account.masterKey, { state: { basket: ['banana'] }, questions: QUESTIONS }, '/v1/decisions');
    expect(alias.status).toBe(200);
    expect(alias.body.answers.pick.choice).toBe(pick.choice);
  });

  it('accepts the model aliases and refuses pinned versions and other models', async () => {
    const body = (model?: string) => ({ ...(model === undefined ? {} : { model }), state: '', questions: { q: QUESTIONS.fresh } });
    for (const model of [undefined, 'jev', 'jev-latest', 'systemone/jev', 'systemone/jev-latest']) {
      expect({ model, status: (await decide(account.masterKey, body(model))).status }).toEqual({ model, status: 200 });
    }
    for (const model of ['jev-2025-01-01', 'systemone/jev-2025-01-01']) {
      const response = await decide(account.masterKey, body(model));
      expect(response.status).toBe(400);
      expect(response.body.error.param).toBe('model');
      expect(response.body.error.message).toMatch(/current version/);
    }
    const other = await decide(account.masterKey, body('gpt-4o'));
    expect(other.status).toBe(400);
    expect(other.body.error.param).toBe('model');
  });

  it('validates the body, naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ questions: { q: QUESTIONS.fresh } }, 'state'],
      [{ state: 5, questions: { q: QUESTIONS.fresh } }, 'state'],
      [{ state: null, questions: { q: QUESTIONS.fresh } }, 'state'],
      [{ state: '', questions: {} }, 'questions'],
      [{ state: '', questions: [] }, 'questions'],
      [{ state: '', questions: { q: { type: 'rank', instructions: 'x' } } }, 'questions.q.type'],
      [{ state: '', questions: { q: { type: 'noul' } } }, 'questions.q.instructions'],
      [{ state: '', questions: { q: { type: 'choice', instructions: 'x', criteria: { a: 5 } } } }, 'questions.q.criteria.a'],
      [{ state: '', questions: { q: { type: 'score', instructions: 'x', criteria: { 0: 'a', 2: 'b' } } } }, 'questions.q.criteria'],
      [{ state: '', questions: { q: { type: 'noul', instructions: 'x', criteria: { true: 'y' } } } }, 'questions.q.criteria'],
    ];
    for (const [body, param] of cases) {
      const response = await decide(account.masterKey, body);
      expect({ param, status: response.status, got: response.body.error?.param }).toEqual({ param, status: 400, got: param });
      expect(response.body.error.type).toBe('invalid_request_error');
    }
    const proto = await api('POST', '/v1/systemone', {
      key: account.masterKey,
      rawBody: '{"state": "", "questions": {"__proto__": {"type": "noul", "instructions": "x"}}}',
    });
    expect(proto.status).toBe(400);
    expect(proto.body.error.param).toBe('questions.__proto__');
    const huge = await decide(account.masterKey, { state: 'word '.repeat(40_000), questions: { q: QUESTIONS.fresh } });
    expect(huge.status).toBe(400);
    expect(huge.body.error.param).toBe('state');
    // Larger than one NATS message (1 MiB): still the spec's 400 for the token limit, not a 413.
    const enormous = await decide(account.masterKey, { state: 'word '.repeat(300_000), questions: { q: QUESTIONS.fresh } });
    expect(enormous.status).toBe(400);
    expect(enormous.body.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded', param: 'state' });
    // Counted exactly up to the limit, never an estimate reported as a count.
    expect(enormous.body.error.message).toBe('state and questions together are more than 32000 tokens, the limit');
  });

  it('makes proxy keys send the model, and checks it against their whitelist', async () => {
    const proxy = await createProxyKey(account.masterKey, { model_whitelist: ['jev'], allocated_ammount: 1 });
    const missing = await decide(proxy.key, { state: '', questions: { q: QUESTIONS.fresh } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('model');
    expect((await decide(proxy.key, { model: 'jev', state: '', questions: { q: QUESTIONS.fresh } })).status).toBe(200);
    // The aliases are the same model to a whitelist, whichever of them it lists.
    const aliasListed = await createProxyKey(account.masterKey, { model_whitelist: ['systemone/jev-latest'], allocated_ammount: 1 });
    for (const [key, model] of [
      [proxy.key, 'jev-latest'],
      [proxy.key, 'systemone/jev'],
      [aliasListed.key, 'jev'],
    ]) {
      const response = await decide(key, { model, state: '', questions: { q: QUESTIONS.fresh } });
      expect({ model, status: response.status }).toEqual({ model, status: 200 });
    }
    // A pinned version is the spec's 400 for every key, not a whitelist miss.
    const pinned = await decide(proxy.key, { model: 'jev-2025-01-01', state: '', questions: { q: QUESTIONS.fresh } });
    expect(pinned.status).toBe(400);
    expect(pinned.body.error).toMatchObject({ param: 'model', message: expect.stringMatching(/current version/) });
    // Not whitelisted: another model only.
    const elsewhere = await createProxyKey(account.masterKey, { model_whitelist: ['sim-chat'], allocated_ammount: 1 });
    const refused = await decide(elsewhere.key, { model: 'systemone/jev', state: '', questions: { q: QUESTIONS.fresh } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe("Model 'systemone/jev' not in whitelist");
  });

  it('refuses a DevPass key, with or without model: it serves coding-plan models only', async () => {
    const devKey = createDevPass(account.accountId);
    for (const body of [
      { state: '', questions: { q: QUESTIONS.fresh } },
      { model: 'jev', state: '', questions: { q: QUESTIONS.fresh } },
    ]) {
      const response = await decide(devKey, body);
      expect({ model: (body as { model?: string }).model, status: response.status }).toEqual({ model: (body as { model?: string }).model, status: 403 });
      expect(response.body.error.message).toMatch(/coding-plan/);
    }
  });

  it('refuses jev (any of its ids, pinned ones too) on chat completions, pointing at /v1/systemone', async () => {
    for (const model of ['jev', 'systemone/jev-latest', 'jev-2025-01-01']) {
      const response = await api('POST', '/v1/chat/completions', {
        key: account.masterKey,
        body: { model, messages: [{ role: 'user', content: 'decide' }] },
      });
      expect({ model, status: response.status }).toEqual({ model, status: 400 });
      expect(response.body.error.message).toContain('/v1/systemone');
    }
  });

  it('bills 0.042 credits per million input tokens, and nothing for a failed decision', async () => {
    const owner = createAccount('pro', '5');
    const ok = await decide(owner.masterKey, { state: { a: 1 }, questions: { q: QUESTIONS.fresh } });
    expect(ok.status).toBe(200);
    const failed = await decide(owner.masterKey, { state: { a: 1 }, questions: { q: { type: 'bad' } } });
    expect(failed.status).toBe(400);
    let entries: any[] = [];
    for (let i = 0; i < 100 && entries.length < 2; i++) {
      entries = (await api('GET', '/v1/user/logs?route=decisions', { key: owner.masterKey })).body;
      if (entries.length < 2) await sleep(100);
    }
    const success = entries.find((entry) => entry.status === 'success');
    const error = entries.find((entry) => entry.status === 'error');
    expect(success).toMatchObject({ model: 'jev', route: 'decisions', input_tokens: ok.body.usage.input_tokens, output_tokens: 0 });
    expect(Math.abs(success.credits - (ok.body.usage.input_tokens * 0.042) / 1_000_000)).toBeLessThan(1e-12);
    expect(error.credits).toBe(0);
  });
});

describe('decisions under saturation', () => {
  it('answers 429 with Retry-After when more decisions are in flight than a router takes', async () => {
    const owner = createAccount('enterprise', '10');
    const results = await Promise.all(Array.from({ length: 60 }, () => decide(owner.masterKey, { state: 'busy', questions: { q: QUESTIONS.fresh } })));
    const busy = results.filter((result) => result.status === 429);
    expect(results.filter((result) => result.status === 200).length).toBeGreaterThan(0);
    expect(busy.length).toBeGreaterThan(0);
    expect(results.every((result) => result.status === 200 || result.status === 429)).toBe(true);
    for (const response of busy) {
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(response.body.error).toMatchObject({ type: 'rate_limit_error', code: 'model_busy' });
    }
  });
});
