import { InflightRequests } from '../text-generation/inflight-requests';
import { ModelCatalog } from '@gateway/catalog';
import { ImageGenerationBody, ImageGenerationRequest, MediaReply, UsageRecordedEvent } from '@gateway/contracts';
import { FilesystemObjectStore } from '@gateway/storage';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { MediaCalls } from '../media/media-call';
import { SimulatorAdapter } from '@gateway/providers';
import { UpstreamCaller } from '../providers/upstream-caller';
import { recordingCalls } from '../testing/recording-publisher';
import { ImagesService } from './images.service';

const CATALOG = ModelCatalog.fromYaml(
  `models:
  - id: small-painter
    pricing: { input: 0, output: 0, per_item: 0.02 }
    endpoints: [images.generations]
    sizes: [256x256, 512x512]
    styles: [natural]
    max_images: 3
    routes: [{ adapter: simulator, upstream_model: sim-image }]
  - id: failing-painter
    pricing: { input: 0, output: 0, per_item: 0.02 }
    endpoints: [images.generations]
    routes: [{ adapter: simulator, upstream_model: sim-image, options: { fail_status: 500 } }]
  - id: chat
    pricing: { input: 1, output: 1 }
    endpoints: [chat.completions]
    routes: [{ adapter: simulator, upstream_model: sim-chat }]
`,
  {},
  () => undefined,
);

const CALLER = { accountId: 'acct_1', keyId: 'key_1', keyType: 'master' as const, maskedKey: 'ek-...abcd', ip: '10.0.0.1', requestId: 'req_1' };

describe('ImagesService', () => {
  const dir = mkdtempSync(join(tmpdir(), 'images-service-'));
  const store = new FilesystemObjectStore(dir);
  let events: UsageRecordedEvent[];
  let service: ImagesService;

  beforeEach(() => {
    events = [];
    const simulator = new SimulatorAdapter();
    const upstream = new UpstreamCaller({ simulator, openai: simulator, anthropic: simulator }, { attemptsPerRoute: 1, baseDelayMs: 0 });
    service = new ImagesService(new MediaCalls(CATALOG, recordingCalls(events), new InflightRequests()), upstream, store);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const generate = async (body: Partial<ImageGenerationBody>): Promise<MediaReply> => {
    const reply = await service.generate({ ...CALLER, body: { prompt: 'a harbour', ...body } } as ImageGenerationRequest);
    await new Promise((resolve) => setImmediate(resolve));
    return reply;
  };

  it('stores url images privately by default, under images/<uuid>.png, and records one image per unit', async () => {
    const reply = await generate({ model: 'small-painter', n: 2 });
    if (reply.kind !== 'images') throw new Error(JSON.stringify(reply));
    expect(reply.images).toHaveLength(2);
    for (const image of reply.images) {
      expect(image.file).toEqual({ key: expect.stringMatching(/^images\/[0-9a-f-]{36}\.png$/), public: false });
      const stored = await store.get(image.file!.key);
      expect(stored?.metadata).toEqual({ contentType: 'image/png', public: false });
      // The model does not offer 1024x1024: its first size is the default.
      expect(PNG.sync.read(stored!.body)).toMatchObject({ width: 256, height: 256 });
    }
    expect(events).toEqual([expect.objectContaining({ route: 'images.generations', model: 'small-painter', units: 2, inputTokens: 0, status: 'success' })]);
  });

  it('returns b64_json without storing, and a public flag reaches the store', async () => {
    const inline = await generate({ model: 'small-painter', response_format: 'b64_json', size: '512x512' });
    if (inline.kind !== 'images') throw new Error(JSON.stringify(inline));
    expect(inline.images[0].file).toBeUndefined();
    expect(PNG.sync.read(Buffer.from(inline.images[0].b64_json!, 'base64'))).toMatchObject({ width: 512, height: 512 });
    const open = await generate({ model: 'small-painter', public: true });
    if (open.kind !== 'images') throw new Error(JSON.stringify(open));
    expect((await store.get(open.images[0].file!.key))?.metadata.public).toBe(true);
  });

  it('refuses, naming the field, what the model does not offer, and records the failure unbilled', async () => {
    const cases: [Partial<ImageGenerationBody>, number, string][] = [
      [{ model: 'small-painter', n: 4 }, 400, 'n'],
      [{ model: 'small-painter', size: '1024x1024' }, 400, 'size'],
      [{ model: 'small-painter', style: 'vivid' }, 400, 'style'],
      [{ model: 'chat' }, 400, 'model'],
      [{ model: 'nobody' }, 404, 'model'],
    ];
    for (const [body, status, param] of cases) {
      const reply = await generate(body);
      expect(reply).toMatchObject({ kind: 'json', status, body: { error: { param } } });
    }
    expect(events.map((event) => [event.status, event.units])).toEqual(cases.map(() => ['error', undefined]));
  });

  it('uses the first image model when none is named, and reports an upstream failure as 502', async () => {
    expect(await generate({ response_format: 'b64_json' })).toMatchObject({ kind: 'images' });
    expect(events[0].model).toBe('small-painter');
    const failed = await generate({ model: 'failing-painter' });
    expect(failed).toMatchObject({ kind: 'json', status: 502, body: { error: { type: 'server_error', code: 'upstream_error' }, request_id: 'req_1' } });
    expect(events[1]).toMatchObject({ model: 'failing-painter', status: 'error' });
  });
});
