import { createHash } from 'node:crypto';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { simulatedPng } from './simulator-image';

/** Pixels the simulator decodes to edit an image (4096×4096); a larger image gets a pattern instead. */
const MAX_EDIT_PIXELS = 4096 * 4096;

interface Rgba {
  width: number;
  height: number;
  data: Buffer | Uint8Array;
}

/** The image's pixels, when it is a PNG or JPEG of at most `MAX_EDIT_PIXELS`; else undefined. */
function decode(bytes: Buffer): Rgba | undefined {
  try {
    if (bytes.subarray(0, 4).toString('latin1') === '\x89PNG') {
      const width = bytes.readUInt32BE(16);
      const height = bytes.readUInt32BE(20);
      if (width * height > MAX_EDIT_PIXELS) return undefined;
      return PNG.sync.read(bytes);
    }
    if (bytes[0] === 0xff && bytes[1] === 0xd8) {
      return jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: MAX_EDIT_PIXELS / 1e6, maxMemoryUsageInMB: 256 });
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * The simulator's edit of an image: a real PNG derived from the input. A PNG or JPEG input is
 * decoded and its colours inverted — only where the mask is transparent when a mask of the same
 * size is given — then tinted by the edit's index (image `index` of `n`), so the `n` results differ;
 * its size is the input's. Any other input (WebP, or too large to decode) gets `simulatedPng` of the
 * requested size, seeded by the input's SHA-256, the prompt and the index.
 */
export function simulatedImageEdit(input: Buffer, mask: Buffer | undefined, prompt: string, index: number, width: number, height: number): Buffer {
  const image = decode(input);
  if (!image) {
    const digest = createHash('sha256').update(input).digest('hex');
    return simulatedPng(`edit\u0000${digest}\u0000${index}\u0000${prompt}`, width, height);
  }
  const cover = mask ? decode(mask) : undefined;
  const masked = cover && cover.width === image.width && cover.height === image.height ? cover : undefined;
  const out = new PNG({ width: image.width, height: image.height });
  const tint = (index * 40) % 256;
  for (let pixel = 0; pixel < image.width * image.height; pixel++) {
    const at = pixel * 4;
    const edit = !masked || masked.data[at + 3] === 0;
    for (let channel = 0; channel < 3; channel++) {
      const value = image.data[at + channel];
      out.data[at + channel] = edit ? (255 - value + (channel === 0 ? tint : 0)) & 0xff : value;
    }
    out.data[at + 3] = image.data[at + 3];
  }
  return PNG.sync.write(out);
}
