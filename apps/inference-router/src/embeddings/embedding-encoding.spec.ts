import { decodeBase64Floats } from '@gateway/providers';
import { encodeEmbedding } from './embedding-encoding';

describe('encodeEmbedding', () => {
  const vector = Float32Array.from([0.1, -0.5, 1 / 3, 1e-8, 0]);

  it('base64 is the little-endian float32 bytes, and decodes to exactly the float values', () => {
    const base64 = encodeEmbedding(vector, 'base64') as string;
    const bytes = Buffer.from(base64, 'base64');
    expect(bytes).toHaveLength(20);
    expect(bytes.readFloatLE(4)).toBe(-0.5);
    expect(bytes.subarray(4, 8)).toEqual(Buffer.from([0x00, 0x00, 0x00, 0xbf]));
    expect(Array.from(decodeBase64Floats(base64))).toEqual(encodeEmbedding(vector, 'float'));
  });

  it('float gives the float32 values as JSON numbers, which read back unchanged', () => {
    const floats = encodeEmbedding(vector, 'float') as number[];
    expect(floats[0]).toBe(Math.fround(0.1));
    expect(JSON.parse(JSON.stringify(floats))).toEqual(floats);
  });
});
