import { InflightRequests } from '../text-generation/inflight-requests';
import { ModelCatalog } from '@gateway/catalog';
import { EmbeddingsBody, EmbeddingsRequest, UsageRecordedEvent } from '@gateway/contracts';
import { MediaCalls } from '../media/media-call';
import { countTokens, SimulatorAdapter } from '@gateway/providers';
import { UpstreamCaller } from '../providers/upstream-caller';
import { recordingCalls } from '../testing/recording-publisher';
import { EmbeddingsService } from './embeddings.service';

const CATALOG = ModelCatalog.fromYaml(
  `models:
  - id: embedder
    tokens: 16
    pricing: { input: 0.02, output: 0 }
    endpoints: [embeddings]
    metadata: { dimensions: 24, max_dimensions: 48 }
    routes: [{ adapter: simulator, upstream_model: sim-embed }]
  - id: embedder-8k
    tokens: 8192
    pricing: { input: 0.02, output: 0 }
    endpoints: [embeddings]
    metadata: { dimensions: 24 }
    routes: [{ adapter: simulator, upstream_model: sim-embed }]
`,
  {},
  () => undefined,
);

const CALLER = { accountId: 'acct_1', keyId: 'key_1', keyType: 'master' as const, maskedKey: 'ek-...abcd', ip: '10.0.0.1', requestId: 'req_1' };

describe('EmbeddingsService', () => {
  let events: UsageRecordedEvent[];
  let service: EmbeddingsService;

  beforeEach(() => {
    events = [];
    const simulator = new SimulatorAdapter();
    const upstream = new UpstreamCaller({ simulator, openai: simulator, anthropic: simulator }, { attemptsPerRoute: 1, baseDelayMs: 0 });
    service = new EmbeddingsService(new MediaCalls(CATALOG, recordingCalls(events), new InflightRequests()), upstream);
  });

  const embed = async (body: Partial<EmbeddingsBody>) => {
    const reply = await service.embed({ ...CALLER, body: { model: 'embedder', input: 'hello world', ...body } } as EmbeddingsRequest);
    await new Promise((resolve) => setImmediate(resolve));
    return reply as { kind: 'json'; status: number; body: any };
  };

  it("uses the model's default size, accepts dimensions up to its maximum, and records the input tokens", async () => {
    const plain = await embed({ input: ['hello world', 'good night'] });
    expect(plain.status).toBe(200);
    expect(plain.body.data.map((item: any) => [item.index, item.embedding.length])).toEqual([
      [0, 24],
      [1, 24],
    ]);
    const tokens = countTokens('hello world') + countTokens('good night');
    expect(plain.body.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    expect(events[0]).toMatchObject({ route: 'embeddings', model: 'embedder', inputTokens: tokens, outputTokens: 0, status: 'success' });
    expect(events[0].units).toBeUndefined();
    expect((await embed({ dimensions: 48 })).body.data[0].embedding).toHaveLength(48);
    expect(await embed({ dimensions: 49 })).toMatchObject({
      status: 400,
      body: { error: { param: 'dimensions', message: 'dimensions must be at most 48 for embedder' } },
    });
  });

  it("refuses an input over the model's tokens, naming the item", async () => {
    const reply = await embed({ input: ['fine', 'word '.repeat(40)] });
    expect(reply).toMatchObject({
      status: 400,
      body: { error: { param: 'input', message: 'input.1 is longer than the 16 tokens embedder takes per input' } },
    });
    expect(events.at(-1)).toMatchObject({ status: 'error' });
  });

  it('counts a long input exactly before refusing it: 10,008 characters of English fit 8,192 tokens', async () => {
    const english = 'Embeddings map text to vectors, and similar texts land close together. '.repeat(150).slice(0, 10_008);
    expect((await embed({ model: 'embedder-8k', input: english })).status).toBe(200);
    expect(await embed({ model: 'embedder-8k', input: english.repeat(6) })).toMatchObject({
      status: 400,
      body: { error: { param: 'input', message: 'input is longer than the 8192 tokens embedder-8k takes per input' } },
    });
  });
});
