import { join } from 'node:path';
import { CatalogError, ModelCatalog } from './model-catalog';

const yaml = (models: string) => `models:\n${models}`;
const model = (id: string, routes: string) => `  - id: ${id}
    pricing: { input: 1, output: 2 }
    endpoints: [chat.completions]
    routes:
${routes}`;

describe('ModelCatalog', () => {
  it("loads the shipped catalog and lists its models with the spec's fields", () => {
    const catalog = ModelCatalog.fromFile(join(__dirname, '../../../config/models.yaml'), {}, () => undefined);
    const entry = catalog.list().find((candidate) => candidate.id === 'sim-chat');
    expect(entry).toMatchObject({
      id: 'sim-chat',
      object: 'model',
      owned_by: 'simulator',
      pricing: { input: 0.5, output: 1.5 },
      endpoints: ['chat.completions', 'responses', 'messages'],
      premium_model: false,
    });
    expect(entry).not.toHaveProperty('routes');
    expect(catalog.get('sim-coder:dev')?.routes[0].adapter).toBe('simulator');
  });

  it("reads a route's structured_outputs capability, and refuses one that is not a boolean", () => {
    const route = (value: string) => `      - { adapter: anthropic, base_url: "https://api.example.com", upstream_model: x, structured_outputs: ${value} }`;
    const catalog = ModelCatalog.fromYaml(yaml(model('native', route('true'))), {}, () => undefined);
    expect(catalog.get('native')?.routes[0].structured_outputs).toBe(true);
    expect(() => ModelCatalog.fromYaml(yaml(model('bad', route('"yes"'))), {}, () => undefined)).toThrow(/structured_outputs/);
  });

  it('drops routes without credentials and models left without routes, saying so', () => {
    const dropped: string[] = [];
    const catalog = ModelCatalog.fromYaml(
      yaml(
        model('keyed', '      - { adapter: openai, base_url: "https://api.example.com/v1", upstream_model: x, api_key_env: EXAMPLE_KEY }') +
          '\n' +
          model(
            'fallback',
            '      - { adapter: openai, base_url: "https://a.example.com/v1", upstream_model: x, api_key_env: MISSING_KEY }\n' +
              '      - { adapter: simulator, upstream_model: sim }',
          ),
      ),
      {},
      (message) => dropped.push(message),
    );
    expect(catalog.get('keyed')).toBeUndefined();
    expect(dropped).toEqual(['model keyed left out of the catalog: no credentials (set EXAMPLE_KEY)']);
    expect(catalog.get('fallback')?.routes.map((route) => route.adapter)).toEqual(['simulator']);
    const withKey = ModelCatalog.fromYaml(
      yaml(model('keyed', '      - { adapter: openai, base_url: "https://api.example.com/v1", upstream_model: x, api_key_env: EXAMPLE_KEY }')),
      { EXAMPLE_KEY: 'sk-1' },
      () => undefined,
    );
    expect(withKey.get('keyed')?.routes[0].apiKey).toBe('sk-1');
  });

  it('keeps every model for services that only price requests (requireCredentials: false)', () => {
    const dropped: string[] = [];
    const pricing = ModelCatalog.fromYaml(
      yaml(model('keyed', '      - { adapter: openai, base_url: "https://api.example.com/v1", upstream_model: x, api_key_env: EXAMPLE_KEY }')),
      {},
      (message) => dropped.push(message),
      'catalog',
      { requireCredentials: false },
    );
    expect(pricing.get('keyed')?.config.pricing).toBeDefined();
    expect(pricing.get('keyed')?.routes[0].apiKey).toBeUndefined();
    expect(dropped).toEqual([]);
  });

  it('names the model and the field of an invalid entry', () => {
    expect(() => ModelCatalog.fromYaml(yaml(model('bad', '      - { adapter: Not_A_Name, upstream_model: x }')), {}, () => undefined)).toThrow(
      /models\[0\] \(bad\)\.routes\.0\.adapter/,
    );
    expect(() =>
      ModelCatalog.fromYaml('models:\n  - id: nopricing\n    endpoints: []\n    routes: [{ adapter: simulator, upstream_model: s }]', {}, () => undefined),
    ).toThrow(/models\[0\] \(nopricing\)\.pricing/);
    expect(() => ModelCatalog.fromYaml('models: [', {}, () => undefined)).toThrow(CatalogError);
  });

  it('validates max_images (1 to 10) and finds the default model of an endpoint in catalog order', () => {
    const media = (id: string, extra: string, endpoint: string) =>
      `  - id: ${id}\n    pricing: { input: 0, output: 0, per_item: 0.04 }\n    endpoints: [${endpoint}]\n${extra}    routes: [{ adapter: simulator, upstream_model: s }]\n`;
    expect(() => ModelCatalog.fromYaml(yaml(media('painter', '    max_images: 11\n', 'images.generations')), {}, () => undefined)).toThrow(
      /models\[0\] \(painter\)\.max_images/,
    );
    const catalog = ModelCatalog.fromYaml(
      yaml(
        media('chat', '', 'chat.completions') + media('painter', '    max_images: 2\n', 'images.generations') + media('painter-2', '', 'images.generations'),
      ),
      {},
      () => undefined,
    );
    expect(catalog.get('painter')?.config.max_images).toBe(2);
    expect(catalog.firstServing('images.generations')?.config.id).toBe('painter');
    expect(catalog.firstServing('embeddings')).toBeUndefined();
  });

  describe('routing fields', () => {
    const load = (routes: string) => ModelCatalog.fromYaml(yaml(model('pooled', routes)), {}, () => undefined).get('pooled')!.routes;

    it('keeps the historical order as fallbacks when no route sets priority or weight, and labels routes by name or index', () => {
      const routes = load('      - { adapter: simulator, upstream_model: a }\n      - { adapter: simulator, upstream_model: b, name: backup }');
      expect(routes.map((r) => [r.label, r.priority, r.weight])).toEqual([
        ['pooled/0', 0, 1],
        ['pooled/backup', 1, 1],
      ]);
      expect(routes[0].breakerPolicy).toEqual({ failures: 5, windowMs: 30_000, cooldownMs: 30_000 });
      expect(routes[0].hasQuota).toBe(false);
    });

    it('puts routes without a priority in group 0 once any route sets weight or priority; reads breaker and quotas', () => {
      const routes = load(
        '      - { adapter: simulator, upstream_model: a, weight: 3, rpm: 60, breaker: { failures: 2, cooldown_seconds: 1.5 } }\n' +
          '      - { adapter: simulator, upstream_model: b }\n' +
          '      - { adapter: simulator, upstream_model: c, priority: 1 }',
      );
      expect(routes.map((r) => [r.priority, r.weight])).toEqual([
        [0, 3],
        [0, 1],
        [1, 1],
      ]);
      expect(routes[0].breakerPolicy).toEqual({ failures: 2, windowMs: 30_000, cooldownMs: 1_500 });
      expect(routes[0].hasQuota).toBe(true);
    });

    it.each([
      ['weight: 0', /routes\.0\.weight/],
      ['priority: -1', /routes\.0\.priority/],
      ['rpm: 1.5', /routes\.0\.rpm/],
      ['max_concurrency: 0', /routes\.0\.max_concurrency/],
      ['breaker: { failures: 0 }', /routes\.0\.breaker\.failures/],
      ['breaker: { window_seconds: -3 }', /routes\.0\.breaker\.window_seconds/],
      ['name: "a b"', /routes\.0\.name/],
    ])('refuses %s at startup, naming the field', (field, message) => {
      expect(() => load(`      - { adapter: simulator, upstream_model: a, ${field} }`)).toThrow(message);
    });

    it('refuses two routes of one model with the same name', () => {
      expect(() => load('      - { adapter: simulator, upstream_model: a, name: x }\n      - { adapter: simulator, upstream_model: b, name: x }')).toThrow(
        /two routes named x/,
      );
    });
  });
});
