import { jsonDepthExceeds } from './json-body.parser';

describe('jsonDepthExceeds', () => {
  it('measures nesting of arrays and objects, ignoring brackets inside strings', () => {
    expect(jsonDepthExceeds('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ s: '[[[[[[[[{{{{{{"\\"[[[[' }), 1)).toBe(false);
  });

  it('takes a million levels without recursing', () => {
    expect(jsonDepthExceeds('['.repeat(1_000_000) + ']'.repeat(1_000_000), 64)).toBe(true);
  });
});
