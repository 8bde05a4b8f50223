import { PassThrough } from 'node:stream';
import { SseReader, type SseDecoder } from './sse-reader';

const dataOf: SseDecoder<string> = { event: (message) => [message.data] };

/** A reader over a body the test writes to; `opened` counts the requests made. */
function readerOver(decoder: SseDecoder<string> = dataOf, readError: (error: unknown) => unknown = (error) => error) {
  const body = new PassThrough();
  const state = { opened: 0 };
  const reader = new SseReader(
    async () => {
      state.opened++;
      return body;
    },
    decoder,
    readError,
  );
  return { body, reader, state };
}

async function readAll<T>(reader: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of reader) items.push(item);
  return items;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('SseReader', () => {
  it('makes the request on the first read, not before', async () => {
    const { body, reader, state } = readerOver();
    await turn();
    expect(state.opened).toBe(0);
    const first = reader.next();
    body.end('data: a\n\n');
    await expect(first).resolves.toEqual({ done: false, value: 'a' });
    expect(state.opened).toBe(1);
    await expect(reader.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it('decodes events split across reads, multi-byte characters included, in order', async () => {
    const { body, reader } = readerOver();
    const all = readAll(reader);
    const bytes = Buffer.from('data: héllo\n\ndata: wörld\n\n: comment\n\ndata: 3\n\n');
    for (let at = 0; at < bytes.length; at += 5) {
      body.write(bytes.subarray(at, at + 5));
      await turn();
    }
    body.end();
    await expect(all).resolves.toEqual(['héllo', 'wörld', '3']);
  });

  it("yields the decoder's end items after the last event, leaving out an event the body ended in the middle of", async () => {
    const { body, reader } = readerOver({ event: (message) => [message.data], end: () => ['end'] });
    const all = readAll(reader);
    body.end('data: a\n\ndata: b\n');
    await expect(all).resolves.toEqual(['a', 'end']);
  });

  it('rejects the first read with the failure to open, and is done after it', async () => {
    const failure = new Error('refused');
    const reader = new SseReader(
      () => Promise.reject(failure),
      dataOf,
      (error) => error,
    );
    await expect(reader.next()).rejects.toBe(failure);
    await expect(reader.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it("hands out the items before a decoder's failure, then the failure, and closes the body", async () => {
    const failure = new Error('in-stream error');
    const { body, reader } = readerOver({
      event: (message) => {
        if (message.data === 'bad') throw failure;
        return [message.data];
      },
    });
    const first = reader.next();
    body.write('data: a\n\ndata: b\n\ndata: bad\n\ndata: never\n\n');
    await expect(first).resolves.toEqual({ done: false, value: 'a' });
    await expect(reader.next()).resolves.toEqual({ done: false, value: 'b' });
    await expect(reader.next()).rejects.toBe(failure);
    expect(body.destroyed).toBe(true);
    await expect(reader.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it('hands out the items held before a read error, then rejects with what the error maps to', async () => {
    const { body, reader } = readerOver(dataOf, (error) => new Error(`mapped: ${(error as Error).message}`));
    const first = reader.next();
    body.write('data: a\n\n');
    await expect(first).resolves.toEqual({ done: false, value: 'a' });
    body.write('data: b\n\ndata: c\n\n');
    await turn();
    body.destroy(new Error('socket reset'));
    await turn();
    await expect(reader.next()).resolves.toEqual({ done: false, value: 'b' });
    await expect(reader.next()).resolves.toEqual({ done: false, value: 'c' });
    await expect(reader.next()).rejects.toThrow('mapped: socket reset');
    const { body: other, reader: waitingReader } = readerOver(dataOf, (error) => new Error(`mapped: ${(error as Error).message}`));
    const waiting = waitingReader.next();
    await turn();
    other.destroy(new Error('socket reset'));
    await expect(waiting).rejects.toThrow('mapped: socket reset');
  });

  it('closes the body when the reader is left early', async () => {
    const { body, reader } = readerOver();
    const first = reader.next();
    body.write('data: a\n\ndata: b\n\n');
    await first;
    for await (const item of reader) {
      expect(item).toBe('b');
      break;
    }
    expect(body.destroyed).toBe(true);
    await expect(reader.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it('pauses the body while a reader that stopped pulling holds many items, and resumes it once they are read', async () => {
    const { body, reader } = readerOver();
    const first = reader.next();
    const events = Array.from({ length: 600 }, (_, i) => `data: ${i}\n\n`);
    body.write(events.slice(0, 300).join(''));
    await expect(first).resolves.toEqual({ done: false, value: '0' });
    expect(body.isPaused()).toBe(true);
    body.end(events.slice(300).join(''));
    const rest = await readAll(reader);
    expect(rest).toEqual(Array.from({ length: 599 }, (_, i) => String(i + 1)));
  });
});
