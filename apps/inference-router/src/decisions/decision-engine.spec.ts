import { ModelCatalog } from '@gateway/catalog';
import type { CanonicalRequest, CanonicalResponse } from '@gateway/canonical';
import { OpenAIAdapter, type ProviderAdapter, SimulatorAdapter, UpstreamError, type UpstreamRoute } from '@gateway/providers';
import { sendJson, startFakeUpstream } from '@gateway/providers/testing';
import { UpstreamCaller } from '../providers/upstream-caller';
import { combineOrderings, DecisionEngine, readOrdering, round2 } from './decision-engine';
import { buildDecisionPrompt } from './decision-prompt';
import { validateDecisionRequest, type ValidDecision } from './decision-validation';

/** The user text of a canonical request. */
const promptOf = (request: CanonicalRequest): string => {
  const message = request.messages[0];
  return message.role === 'user' && message.content[0].type === 'text' ? message.content[0].text : '';
};
const answerLine = (request: CanonicalRequest) => promptOf(request).split('\n').at(-1);
/** The second call of a question: options listed in reverse (PICK, RATE and FRESH below). */
const reversed = (request: CanonicalRequest) =>
  /^1: grape|^0: overripe/m.test(promptOf(request)) || answerLine(request) === 'Answer with exactly one of: no, yes';

/** A one-token completion whose first token has these top alternatives (token → probability). */
function topLogprobs(alternatives: Record<string, number>): CanonicalResponse {
  const entries = Object.entries(alternatives).map(([token, p]) => ({ token, logprob: Math.log(p) }));
  const [first] = [...entries].sort((a, b) => b.logprob - a.logprob);
  return {
    id: 'stub',
    model: 'jev',
    created: 0,
    text: first.token,
    toolCalls: [],
    stopReason: 'length',
    usage: { inputTokens: 10, outputTokens: 1 },
    logprobs: [{ token: first.token, logprob: first.logprob, topLogprobs: entries }],
  };
}

/** An adapter answering from `respond`, recording every request and how many ran at once. */
class StubAdapter implements ProviderAdapter {
  readonly requests: CanonicalRequest[] = [];
  readonly signals: AbortSignal[] = [];
  running = 0;
  maxRunning = 0;

  constructor(private readonly respond: (request: CanonicalRequest, route: UpstreamRoute) => CanonicalResponse | Promise<CanonicalResponse>) {}

  async complete(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): Promise<CanonicalResponse> {
    this.requests.push(request);
    this.signals.push(signal);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      return await this.respond(request, route);
    } finally {
      this.running--;
    }
  }

  // eslint-disable-next-line require-yield
  async *stream(): AsyncIterable<never> {
    throw new Error('not used');
  }
}

const CATALOG_YAML = `models:
  - id: jev
    pricing: { input: 0.042, output: 0 }
    endpoints: [decisions]
    metadata: { vendor: systemone }
    routes:
      - { adapter: openai, base_url: "https://primary.example.com/v1", upstream_model: backing-primary }
      - { adapter: simulator, upstream_model: backing-fallback }
`;

function engineWith(openai: ProviderAdapter, simulator: ProviderAdapter = openai, questionConcurrency = 4) {
  const catalog = ModelCatalog.fromYaml(CATALOG_YAML, {}, () => undefined);
  const upstream = new UpstreamCaller({ openai, simulator, anthropic: openai }, { attemptsPerRoute: 2, baseDelayMs: 0 });
  return new DecisionEngine(catalog, upstream, { questionConcurrency });
}

const decision = (questions: Record<string, unknown>, state: unknown = { basket: ['banana'] }): ValidDecision =>
  validateDecisionRequest({ state, questions }, { keyType: 'master', vendor: 'systemone' });
const signal = () => new AbortController().signal;

const PICK = { type: 'choice', instructions: 'Which fruit is yellow?', criteria: { apple: 'a red fruit', banana: 'a yellow fruit', grape: null } };
const RATE = { type: 'score', instructions: 'How ripe is it?', criteria: ['unripe', 'ripe', 'overripe'] };
const FRESH = { type: 'noul', instructions: 'Is it fresh?' };

describe('DecisionEngine', () => {
  it('choice: renormalises over valid labels, asks again reversed, averages, rounds, and reports confidence', async () => {
    const adapter = new StubAdapter((request) =>
      reversed(request)
        ? // 1 = grape, 2 = banana, 3 = apple
          topLogprobs({ '2': 0.5, '1': 0.3, '3': 0.1, maybe: 0.1 })
        : // 1 = apple, 2 = banana, 3 = grape ("2" and " 2" are the same label; grape not ranked)
          topLogprobs({ '2': 0.6, '1': 0.2, ' 2': 0.1, Hello: 0.1 }),
    );
    const result = await engineWith(adapter).answer(decision({ pick: PICK }), signal());
    // forward: apple .2/.9, banana .7/.9, grape 0; reversed: apple .1/.9, banana .5/.9, grape .3/.9
    // average: 1/6, 2/3, 1/6; TV = 1/3; mass .9 → confidence .9 × 2/3 = .6
    expect(result.answers).toEqual({ pick: { type: 'choice', choice: 'banana', probabilities: { apple: 0.17, banana: 0.67, grape: 0.17 }, confidence: 0.6 } });
    expect(result.provider).toBe('openai');

    expect(adapter.requests).toHaveLength(2);
    const [forwardCall, reversedCall] = [adapter.requests.find((r) => !reversed(r))!, adapter.requests.find(reversed)!];
    for (const request of adapter.requests) {
      expect(request).toMatchObject({ model: 'jev', maxTokens: 1, logprobs: true, topLogprobs: 20, temperature: 0, stream: false });
      expect(answerLine(request)).toBe('Answer with exactly one of: 1, 2, 3');
      expect(promptOf(request)).toContain('Facts (JSON):\n{"basket":["banana"]}\n');
      expect(promptOf(request)).toContain('Which fruit is yellow?');
    }
    expect(promptOf(forwardCall)).toContain('1: apple — a red fruit\n2: banana — a yellow fruit\n3: grape\n');
    expect(promptOf(reversedCall)).toContain('1: grape\n2: banana — a yellow fruit\n3: apple — a red fruit\n');
  });

  it('score: expected level on the 0-based scale, legend as sent, probabilities per level', async () => {
    const adapter = new StubAdapter((request) =>
      reversed(request)
        ? // 0 = overripe, 1 = ripe, 2 = unripe
          topLogprobs({ '0': 0.4, '1': 0.4, '2': 0.1, foo: 0.1 })
        : topLogprobs({ '1': 0.5, '2': 0.3, '0': 0.2 }),
    );
    const result = await engineWith(adapter).answer(decision({ rate: RATE }), signal());
    // forward .2/.5/.3 (mass 1); reversed unripe 1/9, ripe 4/9, overripe 4/9 (mass .9)
    // average .15556/.47222/.37222; score = .47222 + 2 × .37222 = 1.21667
    // TV = ½(.08889 + .05556 + .14444) = .14444; confidence = .95 × .85556 = .81278
    expect(result.answers['rate']).toEqual({
      type: 'score',
      score: 1.22,
      legend: { 0: 'unripe', 1: 'ripe', 2: 'overripe' },
      probabilities: { 0: 0.16, 1: 0.47, 2: 0.37 },
      confidence: 0.81,
    });
    const lines = adapter.requests.map(answerLine);
    expect(lines).toEqual(['Answer with exactly one of: 0, 1, 2', 'Answer with exactly one of: 0, 1, 2']);
    expect(adapter.requests.filter(reversed).map(promptOf)[0]).toContain('0: overripe\n1: ripe\n2: unripe\n');
  });

  it('noul: P(yes), yes/no case-insensitive and trimmed, no confidence, no probabilities', async () => {
    const adapter = new StubAdapter((request) =>
      reversed(request) ? topLogprobs({ no: 0.5, yes: 0.5 }) : topLogprobs({ Yes: 0.3, ' yes': 0.3, no: 0.2, NO: 0.1, maybe: 0.1 }),
    );
    const result = await engineWith(adapter).answer(decision({ fresh: FRESH }), signal());
    // forward yes .6/.9 = .66667, reversed .5 → .58333
    expect(result.answers).toEqual({ fresh: { type: 'noul', noul: 0.58 } });
    expect(adapter.requests.map(answerLine).sort()).toEqual(['Answer with exactly one of: no, yes', 'Answer with exactly one of: yes, no']);
  });

  it('answers every question, in request order, with the same facts', async () => {
    const adapter = new StubAdapter(() => topLogprobs({ '1': 0.5, '0': 0.25, yes: 0.125, no: 0.125 }));
    const result = await engineWith(adapter).answer(decision({ rate: RATE, fresh: FRESH, pick: PICK }), signal());
    expect(Object.keys(result.answers)).toEqual(['rate', 'fresh', 'pick']);
    expect(adapter.requests).toHaveLength(6);
    // pick: label 1 only: forward apple, reversed grape → .5/0/.5, disagreeing completely: confidence 0
    expect(result.answers['pick']).toEqual({ type: 'choice', choice: 'apple', probabilities: { apple: 0.5, banana: 0, grape: 0.5 }, confidence: 0 });
    expect(result.answers['fresh']).toEqual({ type: 'noul', noul: 0.5 });
  });

  it('omits confidence when one ordering ranked no valid label, and answers uniformly when none did', async () => {
    const oneSided = new StubAdapter((request) => (reversed(request) ? topLogprobs({ Sorry: 0.9, I: 0.1 }) : topLogprobs({ '2': 0.75, '1': 0.25 })));
    expect((await engineWith(oneSided).answer(decision({ pick: PICK }), signal())).answers['pick']).toEqual({
      type: 'choice',
      choice: 'banana',
      probabilities: { apple: 0.25, banana: 0.75, grape: 0 },
    });
    const none = new StubAdapter(() => topLogprobs({ Sorry: 1 }));
    const answers = (await engineWith(none).answer(decision({ pick: PICK, rate: RATE, fresh: FRESH }), signal())).answers;
    expect(answers['pick']).toEqual({ type: 'choice', choice: 'apple', probabilities: { apple: 0.33, banana: 0.33, grape: 0.33 } });
    expect(answers['rate']).toEqual({
      type: 'score',
      score: 1,
      legend: { 0: 'unripe', 1: 'ripe', 2: 'overripe' },
      probabilities: { 0: 0.33, 1: 0.33, 2: 0.33 },
    });
    expect(answers['fresh']).toEqual({ type: 'noul', noul: 0.5 });
  });

  it('falls back to the generated label when the backing model reports no logprobs (no confidence)', async () => {
    const adapter = new StubAdapter(() => ({ ...topLogprobs({ ' 2': 1 }), logprobs: undefined }));
    expect((await engineWith(adapter).answer(decision({ pick: PICK }), signal())).answers['pick']).toEqual({
      type: 'choice',
      choice: 'banana',
      probabilities: { apple: 0, banana: 1, grape: 0 },
    });
  });

  it('retries and falls back through the catalog routes', async () => {
    let primaryCalls = 0;
    const primary = new StubAdapter(() => {
      primaryCalls++;
      throw UpstreamError.fromStatus(503, 'overloaded');
    });
    const fallback = new StubAdapter(() => topLogprobs({ yes: 0.8, no: 0.2 }));
    const result = await engineWith(primary, fallback).answer(decision({ fresh: FRESH }), signal());
    expect(result).toEqual({ answers: { fresh: { type: 'noul', noul: 0.8 } }, provider: 'simulator', upstreamRoute: 'jev/1' });
    expect(primaryCalls).toBe(4); // 2 attempts × 2 orderings
    expect(fallback.requests).toHaveLength(2);
  });

  it('throws the upstream failure after retries and fallbacks, aborting the calls still running', async () => {
    const limited = new StubAdapter(() => {
      throw UpstreamError.fromStatus(429, 'slow down');
    });
    await expect(engineWith(limited).answer(decision({ fresh: FRESH }), signal())).rejects.toMatchObject({ status: 429 });

    const slowSignals: AbortSignal[] = [];
    const mixed = new StubAdapter(
      (request) =>
        new Promise<CanonicalResponse>((resolve, reject) => {
          if (promptOf(request).includes('broken')) return reject(UpstreamError.fromStatus(400, 'bad prompt'));
          const own = mixed.signals.at(-1)!;
          slowSignals.push(own);
          const timer = setTimeout(() => resolve(topLogprobs({ yes: 1 })), 5_000);
          own.addEventListener('abort', () => (clearTimeout(timer), reject(own.reason)));
        }),
    );
    const started = Date.now();
    await expect(engineWith(mixed).answer(decision({ slow: FRESH, bad: { type: 'noul', instructions: 'broken' } }), signal())).rejects.toMatchObject({
      status: 400,
      message: 'bad prompt',
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(slowSignals.length).toBeGreaterThan(0);
    expect(slowSignals.every((s) => s.aborted)).toBe(true);
  });

  it('asks at most questionConcurrency questions at once (2 calls each)', async () => {
    const adapter = new StubAdapter(() => new Promise((resolve) => setTimeout(() => resolve(topLogprobs({ yes: 1 })), 5)));
    const questions = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`q${i}`, FRESH]));
    const result = await engineWith(adapter, adapter, 4).answer(decision(questions), signal());
    expect(Object.keys(result.answers)).toHaveLength(10);
    expect(adapter.requests).toHaveLength(20);
    expect(adapter.maxRunning).toBe(8);
    const serial = new StubAdapter(() => new Promise((resolve) => setTimeout(() => resolve(topLogprobs({ yes: 1 })), 2)));
    await engineWith(serial, serial, 1).answer(decision(questions), signal());
    expect(serial.maxRunning).toBe(2);
  });

  it('answers an own __proto__ option id as an own key, and 255 options with letter labels', async () => {
    const body = JSON.parse('{"state": "", "questions": {"q": {"type": "choice", "instructions": "x", "criteria": {"__proto__": "first", "b": null}}}}');
    const proto = new StubAdapter(() => topLogprobs({ '1': 0.5, '2': 0.5 }));
    const answer = (await engineWith(proto).answer(validateDecisionRequest(body, { keyType: 'master', vendor: 'systemone' }), signal())).answers['q'];
    if (answer.type !== 'choice') throw new Error('expected a choice');
    expect(Object.keys(answer.probabilities)).toEqual(['__proto__', 'b']);
    expect(Object.getPrototypeOf(answer.probabilities)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(answer))).toEqual(
      JSON.parse('{"type":"choice","choice":"__proto__","probabilities":{"__proto__":0.5,"b":0.5},"confidence":1}'),
    );

    const criteria = Object.fromEntries(Array.from({ length: 255 }, (_, i) => [`o${i}`, `option ${i}`]));
    // Forward: the 27th label (AA) is option 26; reversed: AA is option 255 - 1 - 26 = 228.
    const many = new StubAdapter(() => topLogprobs({ AA: 0.5, ' AA': 0.25, A: 0.25 }));
    const result = (await engineWith(many).answer(decision({ q: { type: 'choice', instructions: 'x', criteria } }), signal())).answers['q'];
    if (result.type !== 'choice') throw new Error('expected a choice');
    expect(result.probabilities).toMatchObject({ o0: 0.13, o26: 0.38, o228: 0.38, o254: 0.13, o1: 0 });
    expect(result.choice).toBe('o26');
    expect(many.requests.map(answerLine)[0]).toMatch(/^Answer with exactly one of: A, B, .*, Z, AA, AB, /);
  });

  it('is unavailable without a jev catalog entry', async () => {
    const upstream = new UpstreamCaller({} as never, { attemptsPerRoute: 1, baseDelayMs: 0 });
    const engine = new DecisionEngine(new ModelCatalog([]), upstream);
    await expect(engine.answer(decision({ fresh: FRESH }), signal())).rejects.toMatchObject({ name: 'DomainError', code: 'model_unavailable', status: 503 });
  });

  it('answers from the built-in simulator: deterministic distributions over every option', async () => {
    const simulator = new SimulatorAdapter();
    const engine = engineWith(simulator);
    const body = decision({ pick: PICK, rate: RATE, fresh: FRESH });
    const first = await engine.answer(body, signal());
    expect(await engine.answer(body, signal())).toEqual(first);
    const pick = first.answers['pick'];
    if (pick.type !== 'choice') throw new Error('expected a choice');
    expect(Object.keys(pick.probabilities)).toEqual(['apple', 'banana', 'grape']);
    expect(Math.abs(Object.values(pick.probabilities).reduce((a, b) => a + b, 0) - 1)).toBeLessThanOrEqual(0.02);
    expect(pick.probabilities[pick.choice]).toBe(Math.max(...Object.values(pick.probabilities)));
    expect(pick.confidence).toBeGreaterThanOrEqual(0);
    expect(pick.confidence).toBeLessThanOrEqual(1);
    const rate = first.answers['rate'];
    if (rate.type !== 'score') throw new Error('expected a score');
    expect(rate.score).toBeGreaterThanOrEqual(0);
    expect(rate.score).toBeLessThanOrEqual(2);
    expect(first.answers['fresh']).toEqual({ type: 'noul', noul: expect.any(Number) });
  });
});

describe('DecisionEngine over an OpenAI-compatible backing model', () => {
  it('sends one-token logprob requests and reads top_logprobs from the wire format', async () => {
    const upstream = await startFakeUpstream();
    const openai = new OpenAIAdapter();
    try {
      upstream.handle((request, response) => {
        const body = request.body as { messages: { content: string }[] };
        const isReversed = body.messages.at(-1)!.content.endsWith('no, yes');
        const top = isReversed
          ? [
              { token: 'no', logprob: Math.log(0.6) },
              { token: 'yes', logprob: Math.log(0.4) },
            ]
          : [
              { token: 'yes', logprob: Math.log(0.8) },
              { token: 'no', logprob: Math.log(0.2) },
            ];
        sendJson(response, 200, {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 0,
          model: 'gpt-backing',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: top[0].token },
              finish_reason: 'length',
              logprobs: { content: [{ ...top[0], top_logprobs: top }] },
            },
          ],
          usage: { prompt_tokens: 50, completion_tokens: 1, total_tokens: 51 },
        });
      });
      const catalog = ModelCatalog.fromYaml(
        `models:\n  - id: jev\n    pricing: { input: 0.042, output: 0 }\n    endpoints: [decisions]\n    routes:\n      - { adapter: openai, base_url: "${upstream.baseUrl}/v1", upstream_model: gpt-backing, api_key_env: BACKING_KEY }\n`,
        { BACKING_KEY: 'sk-test' },
        () => undefined,
      );
      const engine = new DecisionEngine(catalog, new UpstreamCaller({ openai, simulator: openai, anthropic: openai }, { attemptsPerRoute: 1, baseDelayMs: 0 }));
      const result = await engine.answer(decision({ fresh: FRESH }), signal());
      // (.8 + .4) / 2
      expect(result).toEqual({ answers: { fresh: { type: 'noul', noul: 0.6 } }, provider: 'openai', upstreamRoute: 'jev/0' });
      expect(upstream.requests).toHaveLength(2);
      for (const request of upstream.requests) {
        expect(request.url).toBe('/v1/chat/completions');
        expect(request.body).toMatchObject({ model: 'gpt-backing', max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 20, stream: false });
      }
    } finally {
      await openai.close();
      await upstream.close();
    }
  });
});

describe('readOrdering / combineOrderings / round2', () => {
  const pick = validateDecisionRequest({ state: '', questions: { pick: PICK } }, { keyType: 'master', vendor: 'systemone' }).questions[0];

  it('maps labels back to options, counting the chosen token when the top list lacks it', () => {
    const prompt = buildDecisionPrompt('', pick, 'reversed', 'jev'); // 1 = grape, 2 = banana, 3 = apple
    const response = topLogprobs({ '1': 0.5, '3': 0.25 });
    response.logprobs![0] = { token: '2', logprob: Math.log(0.125), topLogprobs: response.logprobs![0].topLogprobs };
    const reading = readOrdering(response, prompt, 3);
    expect(reading.mass).toBeCloseTo(0.875, 12);
    expect(reading.probabilities!.map((p) => p * 7)).toEqual([expect.closeTo(2, 10), expect.closeTo(1, 10), expect.closeTo(4, 10)]);
    expect(readOrdering(topLogprobs({ x: 1 }), prompt, 3)).toEqual({ mass: 0 });
  });

  it('is case-sensitive for choice labels', () => {
    const many = validateDecisionRequest(
      {
        state: '',
        questions: { q: { type: 'choice', instructions: 'x', criteria: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`o${i}`, null])) } },
      },
      { keyType: 'master', vendor: 'systemone' },
    ).questions[0];
    const prompt = buildDecisionPrompt('', many, 'forward', 'jev');
    expect(readOrdering(topLogprobs({ b: 0.5, B: 0.25 }), prompt, 10).probabilities![1]).toBe(1);
  });

  it('computes confidence as mass × (1 − total variation)', () => {
    expect(combineOrderings({ probabilities: [1, 0], mass: 0.8 }, { probabilities: [1, 0], mass: 0.6 }, 2)).toEqual({ probabilities: [1, 0], confidence: 0.7 });
    expect(combineOrderings({ probabilities: [0.5, 0.5], mass: 1 }, { probabilities: [1, 0], mass: 1 }, 2)).toEqual({
      probabilities: [0.75, 0.25],
      confidence: 0.5,
    });
    expect(combineOrderings({ probabilities: [1, 0] }, { probabilities: [1, 0], mass: 1 }, 2)).toEqual({ probabilities: [1, 0] });
    expect(combineOrderings({ mass: 0 }, { mass: 0 }, 4)).toEqual({ probabilities: [0.25, 0.25, 0.25, 0.25] });
  });

  it('rounds half up to two decimals', () => {
    expect([0.125, 0.285, 0.005, 0.994, 0.995, 1 / 3, 2 / 3].map(round2)).toEqual([0.13, 0.29, 0.01, 0.99, 1, 0.33, 0.67]);
  });
});
