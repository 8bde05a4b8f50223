import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { EmbeddingsBody, ImageGenerationBody, joinMediaReply, MediaReply, ModerationsBody, splitMediaReply } from './media.messages';

const problems = <T extends object>(type: new () => T, body: object) =>
  validateSync(plainToInstance(type, body) as object, { whitelist: true, forbidUnknownValues: true }).map((error) => ({
    field: error.property,
    message: Object.values(error.constraints ?? {})[0],
  }));

describe('media request bodies', () => {
  it('accept what the official client sends', () => {
    expect(problems(EmbeddingsBody, { model: 'sim-embed', input: ['a', 'b'], encoding_format: 'base64', dimensions: 8 })).toEqual([]);
    expect(problems(ModerationsBody, { input: '' })).toEqual([]);
    expect(
      problems(ImageGenerationBody, { prompt: 'a cat', n: 2, size: '1792x1024', quality: 'hd', style: 'natural', response_format: 'b64_json', public: true }),
    ).toEqual([]);
  });

  it('name the field and, for inputs, the offending item', () => {
    expect(problems(EmbeddingsBody, { model: 'm', input: ['ok', 5] })).toEqual([{ field: 'input', message: expect.stringMatching(/input\.1 is a number/) }]);
    expect(problems(EmbeddingsBody, { model: 'm', input: ['ok', ''] })).toEqual([{ field: 'input', message: expect.stringMatching(/input\.1 is empty/) }]);
    expect(problems(EmbeddingsBody, { model: 'm', input: [] })).toEqual([{ field: 'input', message: expect.stringMatching(/it has 0 items/) }]);
    expect(problems(EmbeddingsBody, { model: 'm' })).toEqual([{ field: 'input', message: expect.stringMatching(/^input is required/) }]);
    expect(problems(EmbeddingsBody, { input: 'x' })).toEqual([{ field: 'model', message: 'model must be a string: the id of an embedding model' }]);
    expect(problems(EmbeddingsBody, { model: 'm', input: 'x', encoding_format: 'int8' }).map((p) => p.field)).toEqual(['encoding_format']);
    expect(problems(EmbeddingsBody, { model: 'm', input: 'x', dimensions: 1.5 }).map((p) => p.field)).toEqual(['dimensions']);
    expect(problems(ModerationsBody, { input: { text: 'x' } })).toEqual([{ field: 'input', message: expect.stringMatching(/input is an object/) }]);
    expect(problems(ImageGenerationBody, { prompt: 'x', n: 'two' })).toEqual([{ field: 'n', message: 'n must be a whole number' }]);
    expect(problems(ImageGenerationBody, {})).toEqual([{ field: 'prompt', message: 'prompt must be a string: a text description of the image' }]);
    expect(problems(ImageGenerationBody, { prompt: 'x', n: 11 })).toEqual([{ field: 'n', message: 'n must be at most 10' }]);
    expect(problems(ImageGenerationBody, { prompt: 'x', size: '100x100' }).map((p) => p.field)).toEqual(['size']);
    expect(problems(ImageGenerationBody, { prompt: 'x', public: 'yes' }).map((p) => p.field)).toEqual(['public']);
    expect(problems(ImageGenerationBody, { prompt: '' }).map((p) => p.field)).toEqual(['prompt']);
  });
});

describe('media reply parts', () => {
  it('carry a large reply in order and join it back whole', () => {
    const reply: MediaReply = { kind: 'json', status: 200, body: { text: 'é€😀"'.repeat(5000) } };
    const parts = splitMediaReply(reply, 1000);
    expect(parts.length).toBeGreaterThan(10);
    expect(parts.every((part, index) => part.seq === index && part.last === (index === parts.length - 1))).toBe(true);
    // Every part survives the JSON envelope of a NATS message, even one cut inside a surrogate pair.
    expect(joinMediaReply(parts.map((part) => JSON.parse(JSON.stringify(part))))).toEqual(reply);
    expect(splitMediaReply({ kind: 'json', status: 400, body: {} })).toHaveLength(1);
  });

  it('refuse a reply with parts missing', () => {
    const parts = splitMediaReply({ kind: 'json', status: 200, body: { text: 'x'.repeat(5000) } }, 1000);
    expect(() => joinMediaReply(parts.slice(0, -1))).toThrow(/incomplete/);
    expect(() => joinMediaReply([parts[0], parts[2]])).toThrow(/incomplete/);
    expect(() => joinMediaReply([])).toThrow(/incomplete/);
  });
});
