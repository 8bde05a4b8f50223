import type { EncodingFormat } from '@gateway/contracts';

/** Little-endian float32, as OpenAI encodes `base64` embeddings (and its SDKs decode them). */
export function encodeBase64Floats(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i], i * 4);
  return bytes.toString('base64');
}

/** One vector as the client asked for it: float32 values as JSON numbers, or their base64 bytes. */
export function encodeEmbedding(vector: Float32Array, format: EncodingFormat): number[] | string {
  return format === 'base64' ? encodeBase64Floats(vector) : Array.from(vector);
}
