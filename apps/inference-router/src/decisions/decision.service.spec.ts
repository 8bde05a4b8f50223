import { ModelCatalog } from '@gateway/catalog';
import { DecisionRequest, Subjects, type TextFrame, type UsageRecordedEvent } from '@gateway/contracts';
import { RouterLiveness } from '../liveness/router-liveness';
import { noHeartbeats } from '../testing/no-heartbeats';
import { DtoValidationPipe } from '@gateway/platform';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import type { CanonicalRequest, CanonicalResponse } from '@gateway/canonical';
import { countTokens, type ProviderAdapter, SimulatorAdapter, UpstreamError } from '@gateway/providers';
import { PROVIDER_ADAPTERS, RETRY_POLICY, UpstreamCaller } from '../providers/upstream-caller';
import { MeteredCalls } from '../metering/metered-calls';
import { recordingCalls, recordingPublisher } from '../testing/recording-publisher';
import { UsagePublisher } from '../usage/usage.publisher';
import { DecisionEngine } from './decision-engine';
import { DecisionController, toDecisionCall } from './decision.controller';
import { DecisionService, type DecisionCall, type DecisionServiceOptions } from './decision.service';
import { DomainError } from '@gateway/errors';

const CATALOG = ModelCatalog.fromYaml(
  `models:
  - id: jev
    pricing: { input: 0.042, output: 0 }
    endpoints: [decisions]
    metadata: { vendor: systemone }
    routes:
      - { adapter: simulator, upstream_model: sim-jev }
`,
  {},
  () => undefined,
);

const yesResponse = (): CanonicalResponse => ({
  id: 'r',
  model: 'jev',
  created: 0,
  text: 'yes',
  toolCalls: [],
  stopReason: 'length',
  usage: { inputTokens: 1, outputTokens: 1 },
  logprobs: [
    {
      token: 'yes',
      logprob: Math.log(0.75),
      topLogprobs: [
        { token: 'yes', logprob: Math.log(0.75) },
        { token: 'no', logprob: Math.log(0.25) },
      ],
    },
  ],
});

function setup(complete: (request: CanonicalRequest) => Promise<CanonicalResponse> = async () => yesResponse(), options: Partial<DecisionServiceOptions> = {}) {
  const adapter = {
    complete: (_route, request) => complete(request),
    stream: () => {
      throw new Error('unused');
    },
  } as ProviderAdapter;
  const upstream = new UpstreamCaller({ simulator: adapter, openai: adapter, anthropic: adapter }, { attemptsPerRoute: 1, baseDelayMs: 0 });
  const events: UsageRecordedEvent[] = [];
  const calls = recordingCalls(events);
  const service = new DecisionService(CATALOG, new DecisionEngine(CATALOG, upstream), calls, options);
  return { service, events, calls };
}

const CALLER = { accountId: 'acct_1', keyId: 'key_1', keyType: 'master' as const, maskedKey: 'ek-...abcd', ip: '10.0.0.1', requestId: 'req_1' };
const FRESH = { type: 'noul', instructions: 'Is it fresh?' };
const call = (body: unknown, overrides: Partial<DecisionCall> = {}): DecisionCall => ({ ...CALLER, body, ...overrides });
const json = (frame: TextFrame) => {
  if (frame.kind !== 'json') throw new Error('expected a json frame');
  return frame as { kind: 'json'; status: number; body: any };
};

describe('DecisionService', () => {
  it("answers with the spec's decision response and publishes one success usage event", async () => {
    const { service, events, calls } = setup();
    const body = { model: 'systemone/jev-latest', state: { a: 1 }, questions: { fresh: FRESH }, user: 'ignored' };
    const frame = json(await service.decide(call(body)));
    const tokens = countTokens(JSON.stringify({ state: body.state, questions: body.questions }));
    expect(frame).toEqual({
      kind: 'json',
      status: 200,
      body: {
        id: expect.stringMatching(/^dec_[0-9a-f]{32}$/),
        object: 'decision',
        model: 'jev',
        answers: { fresh: { type: 'noul', noul: 0.75 } },
        usage: { input_tokens: tokens, output_tokens: 0, total_tokens: tokens },
      },
    });
    expect(events).toEqual([
      {
        ...CALLER,
        model: 'jev',
        route: 'decisions',
        inputTokens: tokens,
        outputTokens: 0,
        status: 'success',
        provider: 'simulator',
        upstreamRoute: 'jev/0',
        timestamp: expect.any(Number),
      },
    ]);
    expect(calls.inFlight).toBe(0);
  });

  it('refuses an invalid body with 400 naming the field, recorded as an error', async () => {
    const { service, events } = setup();
    const frame = json(await service.decide(call({ state: '', questions: { q: { type: 'noul' } } })));
    expect(frame).toEqual({
      kind: 'json',
      status: 400,
      body: {
        error: {
          message: 'questions.q.instructions is required',
          type: 'invalid_request_error',
          code: 'missing_required_parameter',
          param: 'questions.q.instructions',
        },
      },
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ model: 'jev', route: 'decisions', inputTokens: 0, outputTokens: 0, status: 'error' });
  });

  it('refuses pinned versions, proxy keys without model, and requests over 32,000 tokens', async () => {
    const { service, events } = setup();
    const pinned = json(await service.decide(call({ model: 'jev-2025-01-01', state: '', questions: { q: FRESH } })));
    expect(pinned.status).toBe(400);
    expect(pinned.body.error).toMatchObject({ code: 'model_version_not_served', param: 'model', message: expect.stringMatching(/current version/) });
    const proxy = json(await service.decide(call({ state: '', questions: { q: FRESH } }, { keyType: 'proxy' })));
    expect(proxy.body.error).toMatchObject({ code: 'missing_required_parameter', param: 'model' });
    const huge = { state: 'word '.repeat(40_000), questions: { q: FRESH } };
    const big = json(await service.decide(call(huge)));
    expect(big.body.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded', param: 'state' });
    expect(events.map((event) => event.status)).toEqual(['error', 'error', 'error']);
    expect(events[2].inputTokens).toBe(countTokens(JSON.stringify(huge)));
  });

  it('turns an upstream 429 into 429 rate_limited with retry_after in the error body', async () => {
    const { service, events } = setup(async () => {
      throw UpstreamError.fromStatus(429, 'Too many requests');
    });
    const frame = json(await service.decide(call({ state: '', questions: { q: FRESH } })));
    expect(frame).toEqual({
      kind: 'json',
      status: 429,
      body: { error: { message: expect.any(String), type: 'rate_limit_error', code: 'rate_limited', param: null, retry_after: 5 } },
    });
    expect(events).toEqual([expect.objectContaining({ status: 'error', inputTokens: countTokens(JSON.stringify({ state: '', questions: { q: FRESH } })) })]);
  });

  it.each([
    ['a 5xx', UpstreamError.fromStatus(502, 'bad gateway')],
    ['a connect error', new UpstreamError(0, 'ECONNREFUSED', true)],
    ['an upstream 4xx (our prompt or configuration)', UpstreamError.fromStatus(400, 'logprobs not supported')],
  ])('answers 503 model_unavailable for %s after retries and fallbacks', async (_name, error) => {
    const { service, events } = setup(async () => {
      throw error;
    });
    const frame = json(await service.decide(call({ state: '', questions: { q: FRESH } })));
    expect(frame).toEqual({
      kind: 'json',
      status: 503,
      body: { error: { message: expect.any(String), type: 'service_unavailable_error', code: 'model_unavailable', param: null }, request_id: 'req_1' },
    });
    expect(events).toEqual([expect.objectContaining({ status: 'error' })]);
  });

  it('answers 503 when the router has no jev model, and 500 on a bug, each with one usage event', async () => {
    const events: UsageRecordedEvent[] = [];
    const usage = recordingCalls(events);
    const empty = new ModelCatalog([]);
    const noModel = new DecisionService(empty, new DecisionEngine(empty, new UpstreamCaller({} as never, { attemptsPerRoute: 1, baseDelayMs: 0 })), usage);
    expect(json(await noModel.decide(call({ state: '', questions: { q: FRESH } }))).status).toBe(503);
    const { service, events: bugEvents } = setup(async () => {
      throw new TypeError('boom');
    });
    const frame = json(await service.decide(call({ state: '', questions: { q: FRESH } })));
    expect(frame).toEqual({
      kind: 'json',
      status: 500,
      body: { error: { message: 'Internal error', type: 'server_error', code: 'internal_error', param: null }, request_id: 'req_1' },
    });
    expect([...events, ...bugEvents].map((event) => event.status)).toEqual(['error', 'error']);
  });

  it('answers 429 model_busy at once beyond its concurrent requests, and serves again after', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { service, events, calls } = setup(async () => (await gate, yesResponse()), { maxConcurrentRequests: 1 });
    const body = { state: '', questions: { q: FRESH } };
    const first = service.decide(call(body, { requestId: 'req_a' }));
    expect(calls.inFlight).toBe(1);
    const busy = json(await service.decide(call(body, { requestId: 'req_b' })));
    expect(busy).toEqual({
      kind: 'json',
      status: 429,
      body: { error: { message: expect.any(String), type: 'rate_limit_error', code: 'model_busy', param: null, retry_after: 1 } },
    });
    release();
    expect(json(await first).status).toBe(200);
    expect(json(await service.decide(call(body, { requestId: 'req_c' }))).status).toBe(200);
    expect(calls.inFlight).toBe(0);
    expect(events.map((event) => [event.requestId, event.status, event.inputTokens > 0])).toEqual([
      ['req_b', 'error', false],
      ['req_a', 'success', true],
      ['req_c', 'success', true],
    ]);
  });
});

describe('DecisionController', () => {
  it('is wired by Nest with the default limits when no options are provided', async () => {
    const simulator = new SimulatorAdapter();
    const events: UsageRecordedEvent[] = [];
    @Module({
      controllers: [DecisionController],
      providers: [
        { provide: ModelCatalog, useValue: CATALOG },
        { provide: PROVIDER_ADAPTERS, useValue: { simulator, openai: simulator, anthropic: simulator } },
        { provide: RETRY_POLICY, useValue: { attemptsPerRoute: 1, baseDelayMs: 0 } },
        { provide: UsagePublisher, useValue: recordingPublisher(events) },
        UpstreamCaller,
        MeteredCalls,
        DecisionEngine,
        DecisionService,
        { provide: RouterLiveness, useValue: noHeartbeats() },
      ],
    })
    class TestModule {}
    const app = await NestFactory.createApplicationContext(TestModule, { logger: false });
    try {
      const frame = json(await (app.get(DecisionController).decide({ ...CALLER, body: { state: '', questions: { q: FRESH } } }) as Promise<TextFrame>));
      expect(frame.status).toBe(200);
      expect(events).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('answers inference.decide', () => {
    expect(Reflect.getMetadata(PATTERN_METADATA, DecisionController.prototype.decide)).toEqual([Subjects.inferenceDecide]);
  });

  it('receives the payload untouched by the global DTO pipe, so a __proto__ question id is refused by name', async () => {
    const text = `{"accountId":"acct_1","keyId":"key_1","keyType":"master","maskedKey":"ek-...abcd","ip":"10.0.0.1","requestId":"req_1",
      "body":{"state":"","questions":{"ok":{"type":"noul","instructions":"x"},"__proto__":{"type":"noul","instructions":"x"}}}}`;
    const [metatype] = Reflect.getMetadata('design:paramtypes', DecisionController.prototype, 'decide') as unknown[];
    expect(metatype).toBe(Object);
    // Nest hands an RPC payload to the global pipes as type 'body' (RpcParamtype.PAYLOAD = RouteParamtypes.BODY).
    const piped = await new DtoValidationPipe().transform(JSON.parse(text), { type: 'body', metatype: metatype as never, data: undefined });
    expect(Object.keys((piped as { body: { questions: object } }).body.questions)).toEqual(['ok', '__proto__']);
    // What the DTO class would have done: the key is gone (it became the prototype).
    const asDto = await new DtoValidationPipe().transform(JSON.parse(text), { type: 'body', metatype: DecisionRequest, data: undefined });
    expect(Object.keys((asDto as { body: { questions: object } }).body.questions)).toEqual(['ok']);
    const { service, events } = setup();
    const frame = json(await (new DecisionController(service, noHeartbeats()).decide(piped) as Promise<TextFrame>));
    expect(frame.status).toBe(400);
    expect(frame.body.error).toMatchObject({ param: 'questions.__proto__', type: 'invalid_request_error' });
    expect(events).toHaveLength(1);
  });

  it('validates the caller fields like the DTO, passing the body on as the same object', () => {
    const body = { state: '' };
    const valid = toDecisionCall({ ...CALLER, body, extra: 'dropped' });
    expect(valid).toEqual({ ...CALLER, body });
    expect(valid.body).toBe(body);
    expect(() => toDecisionCall({ ...CALLER, keyType: 'root', body })).toThrow(DomainError);
    expect(() => toDecisionCall({ ...CALLER, requestId: undefined, body })).toThrow(expect.objectContaining({ param: 'requestId' }));
    expect(() => toDecisionCall('nope')).toThrow(DomainError);
  });
});

describe('DecisionService with the built-in simulator', () => {
  it("answers the spec's example deterministically", async () => {
    const simulator = new SimulatorAdapter();
    const upstream = new UpstreamCaller({ simulator, openai: simulator, anthropic: simulator }, { attemptsPerRoute: 1, baseDelayMs: 0 });
    const service = new DecisionService(CATALOG, new DecisionEngine(CATALOG, upstream), recordingCalls());
    const body = {
      state: { basket: ['banana'] },
      questions: {
        pick: { type: 'choice', instructions: 'Which fruit is yellow?', criteria: { apple: 'a red fruit', banana: 'a yellow fruit', grape: null } },
        rate: { type: 'score', instructions: 'How ripe is it?', criteria: ['unripe', 'ripe', 'overripe'] },
        fresh: FRESH,
      },
    };
    const first = json(await service.decide(call(body)));
    const second = json(await service.decide(call(body)));
    expect(first.status).toBe(200);
    expect(second.body.answers).toEqual(first.body.answers);
    expect(Object.keys(first.body.answers)).toEqual(['pick', 'rate', 'fresh']);
    expect(first.body.answers.rate.legend).toEqual({ 0: 'unripe', 1: 'ripe', 2: 'overripe' });
  });
});
