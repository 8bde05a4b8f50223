import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { UploadedFile } from '@gateway/canonical';

/** A text field, or a file streamed from where it is stored. */
export type MultipartPart = { name: string; value: string } | { name: string; file: UploadedFile };

export interface MultipartBody {
  contentType: string;
  /** Exact bytes of the body: the files' sizes are known, so no chunked encoding is needed. */
  length: number;
  stream: Readable;
}

const quoted = (text: string): string => text.replace(/[\r\n"]/g, (char) => encodeURIComponent(char));

/**
 * `multipart/form-data` generated as a stream: each file is opened and piped through when its turn
 * comes, so no file is held whole. Field order is the caller's.
 */
export function multipartBody(parts: MultipartPart[]): MultipartBody {
  const boundary = `----gateway-${randomBytes(12).toString('hex')}`;
  const heads = parts.map((part) =>
    Buffer.from(
      'file' in part
        ? `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(part.name)}"; filename="${quoted(part.file.filename)}"\r\n` +
            `content-type: ${part.file.contentType.replace(/[\r\n]/g, '')}\r\n\r\n`
        : `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(part.name)}"\r\n\r\n`,
    ),
  );
  const values = parts.map((part) => ('file' in part ? undefined : Buffer.from(part.value)));
  const crlf = Buffer.from('\r\n');
  const tail = Buffer.from(`--${boundary}--\r\n`);
  let length = tail.length;
  parts.forEach((part, index) => (length += heads[index].length + ('file' in part ? part.file.bytes : values[index]!.length) + crlf.length));
  async function* generate(): AsyncGenerator<Buffer> {
    for (const [index, part] of parts.entries()) {
      yield heads[index];
      if ('file' in part) {
        const stream = await part.file.open();
        for await (const chunk of stream) yield chunk as Buffer;
      } else {
        yield values[index]!;
      }
      yield crlf;
    }
    yield tail;
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, length, stream: Readable.from(generate(), { objectMode: false }) };
}
