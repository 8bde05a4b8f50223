import { acceptsEventStream } from './accept-event-stream.guard';

describe('acceptsEventStream', () => {
  it.each([
    ['text/event-stream', true],
    ['Text/Event-Stream', true],
    ['application/json, text/event-stream;q=0.5', true],
    ['text/event-stream; charset=utf-8', true],
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['text/*', false],
    ['application/json', false],
    ['text/event-stream;q=0', false],
    ['text/event-streams', false],
  ])('%j → %s', (accept, expected) => {
    expect(acceptsEventStream(accept)).toBe(expected);
  });
});
