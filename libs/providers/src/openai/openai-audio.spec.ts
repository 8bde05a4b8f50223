import { UpstreamError } from '../provider-adapter';
import { openAIAudioEvents, transcriptionUsageOf } from './openai-audio';

async function* chunksOf(texts: string[]): AsyncGenerator<Buffer> {
  for (const text of texts) yield Buffer.from(text);
}

async function collect(texts: string[]): Promise<Record<string, unknown>[]> {
  const events: Record<string, unknown>[] = [];
  for await (const event of openAIAudioEvents(chunksOf(texts))) events.push(event);
  return events;
}

describe('a streamed transcription read as it arrives', () => {
  it('yields each event once its data is whole, across chunk boundaries and split UTF-8, skipping [DONE]', async () => {
    const delta = 'data: {"type":"transcript.text.delta","delta":"café "}\n\n';
    const done = 'data: {"type":"transcript.text.done","text":"café ","usage":{"type":"duration","seconds":1.5}}\n\n';
    const bytes = Buffer.from(`${delta}${done}data: [DONE]\n\n`);
    const cut = bytes.indexOf(Buffer.from('é')) + 1; // inside the two bytes of é
    const events: Record<string, unknown>[] = [];
    for await (const event of openAIAudioEvents(
      (async function* () {
        yield bytes.subarray(0, cut);
        yield bytes.subarray(cut);
      })(),
    ))
      events.push(event);
    expect(events).toEqual([
      { type: 'transcript.text.delta', delta: 'café ' },
      { type: 'transcript.text.done', text: 'café ', usage: { type: 'duration', seconds: 1.5 } },
    ]);
    expect(transcriptionUsageOf(events[1].usage)).toEqual({ type: 'duration', seconds: 1.5 });
  });

  it('yields the first event before the rest of the body has come', async () => {
    let sentSecond = false;
    const events = openAIAudioEvents(
      (async function* () {
        yield Buffer.from('data: {"type":"transcript.text.delta","delta":"a"}\n\n');
        sentSecond = true;
        yield Buffer.from('data: {"type":"transcript.text.done","text":"a"}\n\n');
      })(),
    );
    expect((await events.next()).value).toEqual({ type: 'transcript.text.delta', delta: 'a' });
    expect(sentSecond).toBe(false);
    expect((await events.next()).value).toEqual({ type: 'transcript.text.done', text: 'a' });
  });

  it('refuses an event whose data is not a JSON object as a malformed answer (502)', async () => {
    const failure = await collect(['data: {"type":"transcript.text.delta","delta":"a"}\n\n', 'data: not json\n\n']).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ status: 502 });
  });
});
