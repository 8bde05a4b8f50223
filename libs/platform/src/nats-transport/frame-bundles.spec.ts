import type { NatsConnection } from 'nats';
import { BUNDLE_TOKEN, forEachBundledFrame, FrameBundler, MAX_BUNDLE_LENGTH, takesBundles, withBundleOptIn } from './frame-bundles';
import { decodeFrame, encodeFrame, RawFrame } from './wire';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

function entries(data: Uint8Array): [string, string][] {
  const found: [string, string][] = [];
  forEachBundledFrame(data, (token, frame) => found.push([token, text(frame)]));
  return found;
}

describe('frame bundles', () => {
  it('reads each entry of a bundle as its token and the frame’s bytes, lengths counted in UTF-8 bytes', () => {
    const raw = encodeFrame(new RawFrame({ kind: 'sse-bytes', events: 1 }, 'data: {"t":"é€😀\\n"}\n\n'));
    const json = encodeFrame({ kind: 'end' });
    const data = bytes(`\u001da ${Buffer.byteLength(raw)}\n${raw}1z ${Buffer.byteLength(json)}\n${json}`);
    expect(entries(data)).toEqual([
      ['a', raw],
      ['1z', json],
    ]);
    // A frame is the message data it would have been alone: the raw frame's head and body read back.
    const decoded: unknown[] = [];
    forEachBundledFrame(data, (_token, frame) => decoded.push(decodeFrame(frame)));
    expect(decoded).toEqual([{ kind: 'sse-bytes', events: 1, body: bytes('data: {"t":"é€😀\\n"}\n\n') }, { kind: 'end' }]);
  });

  it('sends each frame alone, as a bundle of one, on a connection whose writes are not coalesced; a frame over the limit to its own subject', () => {
    const published: [string, string][] = [];
    const bundler = new FrameBundler({} as NatsConnection, (subject, data) => published.push([subject, data]));
    const send = bundler.senderTo('_INBOX.abc.7');
    expect(send).toBeDefined();
    send?.('{"kind":"heartbeat"}');
    const huge = JSON.stringify({ kind: 'json', status: 200, body: 'x'.repeat(MAX_BUNDLE_LENGTH) });
    send?.(huge);
    expect(published.map(([subject]) => subject)).toEqual([`_INBOX.abc.${BUNDLE_TOKEN}`, '_INBOX.abc.7']);
    expect(entries(bytes(published[0][1]))).toEqual([['7', '{"kind":"heartbeat"}']]);
    expect(published[1][1]).toBe(huge);
    // A reply subject of one token has no prefix to bundle under.
    expect(bundler.senderTo('reply')).toBeUndefined();
  });

  it('says a caller takes bundles only when its request has the header', () => {
    expect(takesBundles(withBundleOptIn(undefined))).toBe(true);
    expect(takesBundles(undefined)).toBe(false);
  });

  it.each([
    ['data that is not a bundle', '{"kind":"end"}'],
    ['an entry without its length', '\u001dabc'],
    ['a length that is not a number', '\u001da 1x\n{}'],
    ['an empty length', '\u001da \n{}'],
    ['an entry longer than the data', '\u001da 15\n{"kind":"end"}'],
  ])('refuses %s', (_case, wire) => {
    expect(() => forEachBundledFrame(bytes(wire), () => undefined)).toThrow(SyntaxError);
  });
});
