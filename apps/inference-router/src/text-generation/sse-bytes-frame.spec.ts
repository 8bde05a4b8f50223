import { RawFrame } from '@gateway/platform';
import { MAX_JOINED_EVENTS_LENGTH, SseBytesFrame } from './sse-bytes-frame';

describe('SseBytesFrame', () => {
  const first = new SseBytesFrame({ kind: 'sse-bytes', events: 2, inputTokens: 9, outputTokens: 1, router: 'router-a' }, 'data: a\n\ndata: b\n\n');

  it('joins the next frame: events in order and counted, the later token counts, the first replica name, the later last', () => {
    const later = new SseBytesFrame({ kind: 'sse-bytes', events: 1, inputTokens: 9, outputTokens: 3, last: true }, 'data: [DONE]\n\n');
    const joined = first.joinedWith(later);
    expect(joined?.body).toBe('data: a\n\ndata: b\n\ndata: [DONE]\n\n');
    expect(joined?.head).toEqual({ kind: 'sse-bytes', events: 3, inputTokens: 9, outputTokens: 3, last: true, router: 'router-a' });
  });

  it('joins nothing to a last frame, no other kind of raw frame, and stops at the size bound', () => {
    const last = new SseBytesFrame({ kind: 'sse-bytes', events: 1, last: true }, 'data: [DONE]\n\n');
    expect(last.joinedWith(first)).toBeUndefined();
    expect(first.joinedWith(new RawFrame({ kind: 'sse-bytes', events: 1 }, 'data: c\n\n'))).toBeUndefined();
    const big = new SseBytesFrame({ kind: 'sse-bytes', events: 1 }, 'x'.repeat(MAX_JOINED_EVENTS_LENGTH - first.body.length + 1));
    expect(first.joinedWith(big)).toBeUndefined();
    const fits = new SseBytesFrame({ kind: 'sse-bytes', events: 1 }, 'x'.repeat(MAX_JOINED_EVENTS_LENGTH - first.body.length));
    expect(first.joinedWith(fits)?.body.length).toBe(MAX_JOINED_EVENTS_LENGTH);
  });
});
