import { DomainError, ErrorCode } from '@gateway/errors';
import { IMAGE_EDIT_MAX_IMAGES } from '@gateway/contracts';
import type { Readable } from 'node:stream';
import type { EdgeEnv } from '../config/edge.env';
import type { UploadSpec } from '../uploads/multipart-upload.decorator';

/** The image formats an edit takes, as their first bytes tell them. */
export const IMAGE_FORMATS = 'PNG, JPEG or WebP';

/** The format of an image from its first bytes (its signature), whatever the client declared. */
export function imageFormatOf(head: Buffer): 'image/png' | 'image/jpeg' | 'image/webp' | undefined {
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

const DECLARED = ['image/png', 'image/jpeg', 'image/jpg', 'image/webp'];

/**
 * Reads the first bytes of an uploaded image while it streams into the store: a declared content
 * type other than PNG, JPEG or WebP (`application/octet-stream` aside: the bytes decide), or bytes
 * that are none of them, are a 400 naming the field. The mask must be a PNG.
 */
export async function inspectImage(stream: Readable, part: { field: string; mimeType: string }): Promise<Record<string, unknown>> {
  const declared = (part.mimeType || '').toLowerCase();
  const refuse = (why: string) => new DomainError(ErrorCode.InvalidRequest, `${part.field} ${why}`, part.field);
  if (declared && declared !== 'application/octet-stream' && !DECLARED.includes(declared)) {
    stream.resume();
    throw refuse(`is ${declared}: it must be a ${IMAGE_FORMATS} image`);
  }
  const head = await firstBytes(stream, 12);
  const format = imageFormatOf(head);
  if (!format) throw refuse(`is not a readable ${IMAGE_FORMATS} image`);
  if (part.field === 'mask' && format !== 'image/png') throw refuse('must be a PNG image');
  return { content_type: format };
}

/** The first `count` bytes of a stream (fewer if it ends first); the rest is left to the caller (the upload drains it). */
function firstBytes(stream: Readable, count: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const done = () => {
      stream.off('data', onData);
      stream.off('end', done);
      stream.off('error', reject);
      resolve(Buffer.concat(chunks).subarray(0, count));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= count) done();
    };
    stream.on('data', onData);
    stream.once('end', done);
    stream.once('error', reject);
  });
}

/** The multipart form of `/v1/images/edits`. */
export const imageEditUpload = (env: EdgeEnv): UploadSpec => ({
  files: {
    image: { maxBytes: env.IMAGE_UPLOAD_MAX_FILE_BYTES, maxCount: IMAGE_EDIT_MAX_IMAGES, inspect: inspectImage },
    mask: { maxBytes: env.IMAGE_UPLOAD_MAX_FILE_BYTES, optional: true, inspect: inspectImage },
  },
  maxRequestBytes: env.IMAGE_UPLOAD_MAX_REQUEST_BYTES,
  numbers: ['n', 'partial_images'],
  booleans: ['stream', 'public'],
});
