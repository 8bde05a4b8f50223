import { ModerationCategories } from '@gateway/contracts';
import { PNG } from 'pngjs';
import type { EmbeddingRequest, ImageRequest } from '@gateway/canonical';
import { UpstreamError, type UpstreamRoute } from '../provider-adapter';
import { countTextsTokens } from '../token-count';
import { SimulatorAdapter } from './simulator.adapter';

const route = (upstreamModel: string, options?: Record<string, unknown>): UpstreamRoute => ({ adapter: 'simulator', upstreamModel, options });
const signal = () => new AbortController().signal;
const norm = (vector: Float32Array) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i], 0) / (norm(a) * norm(b));

const embedding = (inputs: string[], dimensions?: number): EmbeddingRequest => ({
  model: 'sim-embed',
  inputs,
  dimensions,
  dimensionsRequested: dimensions !== undefined,
  encoding: 'float',
});

const image = (fields: Partial<ImageRequest> = {}): ImageRequest => ({
  model: 'sim-image',
  prompt: 'a lighthouse at dusk',
  n: 1,
  size: '256x256',
  quality: 'standard',
  style: 'vivid',
  explicit: { quality: false, style: false },
  ...fields,
});

describe('SimulatorAdapter embeddings', () => {
  const adapter = new SimulatorAdapter();

  it('gives one unit-length float32 vector of the requested size per input, and counts tokens', async () => {
    const inputs = ['The quick brown fox', 'jumps over the lazy dog', '日本語のテキスト'];
    const result = await adapter.embed(route('sim-embed'), embedding(inputs, 64), signal());
    expect(result.vectors).toHaveLength(3);
    for (const vector of result.vectors) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector).toHaveLength(64);
      expect(Math.abs(norm(vector) - 1)).toBeLessThan(1e-6);
    }
    expect(result.inputTokens).toBe(countTextsTokens(inputs).reduce((sum, tokens) => sum + tokens, 0));
    expect((await adapter.embed(route('sim-embed'), embedding(['x']), signal())).vectors[0]).toHaveLength(1536);
  });

  it('is deterministic, differs between texts, and is closer for texts that share words', async () => {
    const [a, again, related, unrelated] = (
      await adapter.embed(
        route('sim-embed'),
        embedding(['red apples and green pears', 'red apples and green pears', 'green pears and red apples today', 'quantum chromodynamics lecture']),
        signal(),
      )
    ).vectors;
    expect(Array.from(again)).toEqual(Array.from(a));
    expect(cosine(a, related)).toBeGreaterThan(0.8);
    expect(Math.abs(cosine(a, unrelated))).toBeLessThan(0.5);
  });

  it('shortens like OpenAI: fewer dimensions are the longer vector cut and renormalised', async () => {
    const [long] = (await adapter.embed(route('sim-embed'), embedding(['shorten me'], 256), signal())).vectors;
    const [short] = (await adapter.embed(route('sim-embed'), embedding(['shorten me'], 32), signal())).vectors;
    const cut = long.slice(0, 32);
    const cutNorm = norm(cut);
    short.forEach((value, i) => expect(value).toBeCloseTo(cut[i] / cutNorm, 6));
  });
});

describe('SimulatorAdapter moderation', () => {
  const adapter = new SimulatorAdapter();
  const moderate = async (inputs: string[]) => (await adapter.moderate(route('sim-moderation'), { model: 'sim-moderation', inputs }, signal())).results;

  it('answers one result per input with all 11 categories, and flags nothing in harmless text', async () => {
    const [harmless] = await moderate(['What a lovely day for a picnic.']);
    expect(Object.keys(harmless.categories).sort()).toEqual([...ModerationCategories].sort());
    expect(Object.keys(harmless.category_scores).sort()).toEqual([...ModerationCategories].sort());
    expect(harmless.flagged).toBe(false);
    for (const category of ModerationCategories) {
      expect(harmless.categories[category]).toBe(false);
      expect(harmless.category_scores[category]).toBeGreaterThanOrEqual(0);
      expect(harmless.category_scores[category]).toBeLessThan(1e-4);
    }
  });

  it("scores keyword matches 1 − 0.2^k, flags from 0.5, and lifts a subcategory's parent", async () => {
    const [violent, graphic, threat, minors, selfHarm] = await moderate([
      'I will kill them and then attack again',
      'The scene was pure gore.',
      'Watch your back, loser.',
      'explicit content involving a minor',
      'I want to die',
    ]);
    expect(violent.flagged).toBe(true);
    expect(violent.categories.violence).toBe(true);
    expect(violent.category_scores.violence).toBeCloseTo(0.96, 10);
    expect(violent.categories.hate).toBe(false);
    expect(graphic.category_scores['violence/graphic']).toBeCloseTo(0.8, 10);
    expect(graphic.category_scores.violence).toBeCloseTo(0.8, 10);
    expect(graphic.categories.violence).toBe(true);
    expect(threat.categories['harassment/threatening']).toBe(true);
    expect(threat.category_scores.harassment).toBeCloseTo(0.8, 10);
    expect(minors.categories['sexual/minors']).toBe(true);
    expect(minors.categories.sexual).toBe(true);
    expect(selfHarm.categories['self-harm/intent']).toBe(true);
    expect(selfHarm.categories['self-harm']).toBe(true);
  });

  it('is deterministic, whole words only, case-insensitive', async () => {
    const [first, second, skilled, shouted] = await moderate(['a calm sentence', 'a calm sentence', 'a skilled killer? no: skillful', 'KILL']);
    expect(second).toEqual(first);
    expect(skilled.categories.violence).toBe(false);
    expect(shouted.categories.violence).toBe(true);
  });
});

describe('SimulatorAdapter images', () => {
  const adapter = new SimulatorAdapter();

  it.each([
    ['256x256', 256, 256],
    ['1792x1024', 1792, 1024],
    ['1024x1792', 1024, 1792],
  ] as const)('makes real PNGs of %s', async (size, width, height) => {
    const { images } = await adapter.generateImages(route('sim-image'), image({ size, n: 2 }), signal());
    expect(images).toHaveLength(2);
    for (const generated of images) {
      expect(generated.contentType).toBe('image/png');
      const decoded = PNG.sync.read(generated.bytes);
      expect([decoded.width, decoded.height]).toEqual([width, height]);
    }
    expect(images[0].bytes.equals(images[1].bytes)).toBe(false);
  });

  it('derives the picture from the prompt, deterministically', async () => {
    const first = await adapter.generateImages(route('sim-image'), image(), signal());
    const again = await adapter.generateImages(route('sim-image'), image(), signal());
    const other = await adapter.generateImages(route('sim-image'), image({ prompt: 'a forest in the rain' }), signal());
    expect(again.images[0].bytes.equals(first.images[0].bytes)).toBe(true);
    expect(other.images[0].bytes.equals(first.images[0].bytes)).toBe(false);
    expect(first.images[0].revisedPrompt).toBe('a lighthouse at dusk');
  });

  it('fails like an upstream when the route says so (fallback tests)', async () => {
    await expect(adapter.generateImages(route('sim-image', { fail_status: 503 }), image(), signal())).rejects.toEqual(expect.any(UpstreamError));
  });
});
