import { decodeFrame, encodeFrame, RawFrame } from './wire';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('stream frames on the wire', () => {
  it('sends a frame as its JSON, and reads it back', () => {
    const frame = { kind: 'sse', frames: ['data: {"x":"\\n"}\n\n'], last: true };
    expect(encodeFrame(frame)).toBe(JSON.stringify(frame));
    expect(decodeFrame(bytes(encodeFrame(frame)))).toEqual(frame);
  });

  it('sends a raw frame as its head’s JSON and its body as it is, and reads back the head with the body’s bytes', () => {
    const body = 'event: delta\ndata: {"text":"a \\"quoted\\" é€😀"}\n\n';
    const wire = encodeFrame(new RawFrame({ kind: 'sse-bytes', events: 1, note: 'two\nlines' }, body));
    // The body is not escaped: it follows the head's line as it is.
    expect(wire).toBe(`\u001e{"kind":"sse-bytes","events":1,"note":"two\\nlines"}\n${body}`);
    const decoded = decodeFrame(bytes(wire)) as { body: Uint8Array };
    expect(decoded).toEqual({ kind: 'sse-bytes', events: 1, note: 'two\nlines', body: expect.any(Uint8Array) });
    expect(new TextDecoder().decode(decoded.body)).toBe(body);
  });

  it('reads a raw frame with an empty body', () => {
    const decoded = decodeFrame(bytes(encodeFrame(new RawFrame({ kind: 'sse-bytes', events: 0 }, '')))) as { body: Uint8Array };
    expect(decoded.body).toHaveLength(0);
  });

  it.each([
    ['a head without its end', '\u001e{"kind":"sse-bytes"}'],
    ['a head that is not JSON', '\u001e{kind}\ndata: x\n\n'],
    ['a head that is not an object', '\u001e[1,2]\ndata: x\n\n'],
    ['a message that is neither JSON nor raw', 'data: x\n\n'],
  ])('refuses %s', (_case, wire) => {
    expect(() => decodeFrame(bytes(wire))).toThrow(SyntaxError);
  });
});
