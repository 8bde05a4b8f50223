import { ModelCatalog } from '@gateway/catalog';
import { VideoGenerationBody } from '@gateway/contracts';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { isUsableJobId, planVideoRequest } from './video-request';
import { DomainError, ErrorCode } from '@gateway/errors';

const catalog = ModelCatalog.fromYaml(
  `
models:
  - id: clip
    pricing: { input: 0, output: 0, per_item: 0.1 }
    endpoints: [videos.generations]
    sizes: ['9:16', '16:9']
    routes: [{ adapter: simulator, upstream_model: v }]
  - id: clip-any-size
    pricing: { input: 0, output: 0 }
    endpoints: [videos.generations]
    routes: [{ adapter: simulator, upstream_model: v }]
  - id: chat
    pricing: { input: 1, output: 1 }
    endpoints: [chat.completions]
    routes: [{ adapter: simulator, upstream_model: c }]
`,
  {},
  () => undefined,
);

function problem(run: () => unknown): { code: ErrorCode; param?: string; message: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, param: error.param, message: error.message };
    throw error;
  }
  throw new Error('expected a DomainError');
}

/** The first field the body DTO rejects, as the edge's validation pipe reports it. */
function invalidField(body: object): string | undefined {
  return validateSync(plainToInstance(VideoGenerationBody, body))[0]?.property;
}

describe('video request validation', () => {
  it.each([
    ['16:9', undefined],
    ['9:16', undefined],
    ['1:1', undefined],
    ['21:9', undefined],
    ['1280x720', 'size'],
    ['16/9', 'size'],
    ['0:9', 'size'],
    ['16:0', 'size'],
    ['-16:9', 'size'],
    [' 16:9', 'size'],
    ['16:9 ', 'size'],
    ['16.5:9', 'size'],
    ['12345:1', 'size'],
    ['', 'size'],
  ])('size %j → %s', (size, field) => {
    expect(invalidField({ model: 'clip', prompt: 'p', size })).toBe(field);
  });

  it('requires model and prompt as non-empty strings; size is optional', () => {
    expect(invalidField({ prompt: 'p' })).toBe('model');
    expect(invalidField({ model: 'clip' })).toBe('prompt');
    expect(invalidField({ model: 'clip', prompt: '' })).toBe('prompt');
    expect(invalidField({ model: 'clip', prompt: 'p' })).toBeUndefined();
  });

  it('takes a size the model lists, else its first; any well-formed size when it lists none', () => {
    expect(planVideoRequest(catalog, { model: 'clip', prompt: 'p', size: '16:9' })).toEqual({ model: 'clip', prompt: 'p', size: '16:9' });
    expect(planVideoRequest(catalog, { model: 'clip', prompt: 'p' }).size).toBe('9:16');
    expect(planVideoRequest(catalog, { model: 'clip-any-size', prompt: 'p', size: '4:3' }).size).toBe('4:3');
    expect(planVideoRequest(catalog, { model: 'clip-any-size', prompt: 'p' }).size).toBe('16:9');
  });

  it('refuses a size the model does not list, naming the allowed ones', () => {
    expect(problem(() => planVideoRequest(catalog, { model: 'clip', prompt: 'p', size: '1:1' }))).toEqual({
      code: ErrorCode.InvalidRequest,
      param: 'size',
      message: "size '1:1' is not available for clip; allowed sizes: 9:16, 16:9",
    });
  });

  it('answers 404 for an unknown model and 400 for a model that does not make videos', () => {
    expect(problem(() => planVideoRequest(catalog, { model: 'nope', prompt: 'p' }))).toMatchObject({ code: ErrorCode.NotFound, param: 'model' });
    expect(problem(() => planVideoRequest(catalog, { model: 'chat', prompt: 'p' }))).toMatchObject({ code: ErrorCode.InvalidRequest, param: 'model' });
  });

  it('accepts as job ids only request ids BullMQ takes (no colon, not an integer)', () => {
    expect(isUsableJobId('req_0123abcd')).toBe(true);
    expect(isUsableJobId('client-id.7')).toBe(true);
    expect(isUsableJobId('12ab')).toBe(true);
    expect(isUsableJobId('a:b')).toBe(false);
    expect(isUsableJobId('42')).toBe(false);
  });
});
