import { Readable } from 'node:stream';
import { multipartBody } from './multipart-body';

describe('multipartBody', () => {
  it('streams the fields and the file in order, with the exact length it announces', async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
    let opened = 0;
    const file = {
      filename: 'clip "1".wav',
      contentType: 'audio/wav',
      bytes: bytes.length,
      open: async () => {
        opened++;
        return Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]);
      },
    };
    const body = multipartBody([
      { name: 'file', file },
      { name: 'model', value: 'whisper-1' },
      { name: 'timestamp_granularities[]', value: 'word' },
    ]);
    expect(opened).toBe(0);
    const chunks: Buffer[] = [];
    for await (const chunk of body.stream) chunks.push(chunk as Buffer);
    const sent = Buffer.concat(chunks);
    expect(sent.length).toBe(body.length);
    const boundary = /boundary=(.+)$/.exec(body.contentType)![1];
    const text = sent.toString('latin1');
    expect(
      text.startsWith(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="clip %221%22.wav"\r\ncontent-type: audio/wav\r\n\r\n`),
    ).toBe(true);
    expect(sent.includes(bytes)).toBe(true);
    expect(text).toContain(`\r\n--${boundary}\r\ncontent-disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n`);
    expect(text).toContain('name="timestamp_granularities[]"\r\n\r\nword\r\n');
    expect(text.endsWith(`--${boundary}--\r\n`)).toBe(true);
    expect(opened).toBe(1);
  });
});
