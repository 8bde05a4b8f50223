import { inspectJson, isStorableText, mayHoldForbiddenKey, mayHoldUnstorableText } from './json-inspection';

const TEXT = { prototypeKeys: false, text: true };

describe('isStorableText', () => {
  it('refuses a NUL and a lone surrogate, and takes surrogate pairs (emoji)', () => {
    expect(isStorableText('plain text, é, 中文')).toBe(true);
    expect(isStorableText('\ud83d\ude00')).toBe(true);
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText('\ud800')).toBe(false);
    expect(isStorableText('x\ude00')).toBe(false);
    expect(isStorableText('\ude00\ud83d')).toBe(false);
  });
});

describe('mayHoldUnstorableText', () => {
  it('looks for the escapes that can write one, in any case', () => {
    expect(mayHoldUnstorableText('{"a":"\\u0000"}')).toBe(true);
    expect(mayHoldUnstorableText('{"a":"\\uD800"}')).toBe(true);
    expect(mayHoldUnstorableText('{"a":"\\udfff"}')).toBe(true);
    expect(mayHoldUnstorableText('{"a":"\\u00e9 \\u4e00 \\ue000"}')).toBe(false);
    expect(mayHoldUnstorableText('{"a":"no escapes at all"}')).toBe(false);
  });
});

describe('inspectJson', () => {
  it('names the first field holding unstorable text, keys included, and passes emoji written as pairs', () => {
    const parse = (text: string) => inspectJson(JSON.parse(text), TEXT);
    expect(parse('{"model":"sim","messages":[{"role":"user","content":"hi \\ud83d\\ude00"}]}')).toBeUndefined();
    expect(parse('{"model":"sim","messages":[{"role":"user","content":"hi"},{"role":"user","content":"a\\u0000"}]}')).toEqual({
      kind: 'unstorable-text',
      param: 'messages.1.content',
    });
    expect(parse('{"model":"a\\ud800b"}')).toEqual({ kind: 'unstorable-text', param: 'model' });
    expect(parse('{"metadata":{"k\\u0000":"v"}}')).toEqual({ kind: 'unstorable-text', param: 'metadata.k\\u0000' });
    expect(parse('"\\udc00"')).toEqual({ kind: 'unstorable-text', param: '' });
  });

  it('refuses the prototype keys secure-json-parse refuses, and only those', () => {
    const keys = { prototypeKeys: true, text: false };
    expect(inspectJson(JSON.parse('{"a":[{"__proto__":{"x":1}}]}'), keys)).toEqual({ kind: 'forbidden-key', param: 'a.0' });
    expect(inspectJson(JSON.parse('{"constructor":{"prototype":{}}}'), keys)).toEqual({ kind: 'forbidden-key', param: '' });
    expect(inspectJson(JSON.parse('{"constructor":{"name":"x"},"prototype":1}'), keys)).toBeUndefined();
  });

  it('walks a value nested a million levels deep without recursing', () => {
    let value: unknown = 'a\u0000';
    for (let i = 0; i < 1_000_000; i++) value = [value];
    expect(inspectJson(value, TEXT)?.kind).toBe('unstorable-text');
  });
});

describe('mayHoldForbiddenKey', () => {
  it('lets a body that names no prototype key, and has no escape that could spell one, skip the walk', () => {
    expect(mayHoldForbiddenKey('{"model":"sim-chat","messages":[{"role":"user","content":"hi"}]}')).toBe(false);
    expect(mayHoldForbiddenKey('{"__proto__":{"x":1}}')).toBe(true);
    expect(mayHoldForbiddenKey('{"a":{"constructor":{"prototype":1}}}')).toBe(true);
    expect(mayHoldForbiddenKey('{"\\u005f_proto__":{"x":1}}')).toBe(true);
  });
});
