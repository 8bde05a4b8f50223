import { hash32, seededRandom } from './simulator-random';

/** Vector size when neither the request nor the model's `metadata.dimensions` sets one. */
export const SIMULATOR_DEFAULT_DIMENSIONS = 1536;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * A deterministic unit-length embedding: the sum, over the text's words (lower-cased, counted
 * with repetition), of one pseudo-random vector per word seeded by the model and the word, then
 * normalised. Texts sharing words point in similar directions, so similarity search behaves
 * plausibly. Each word's vector is the same PRNG sequence whatever the size, so a shorter
 * `dimensions` is the longer vector cut and renormalised, as with OpenAI's shortened embeddings.
 * Components are float32 values, so the `float` and `base64` encodings carry the same numbers.
 */
export function simulatedEmbedding(model: string, text: string, dimensions: number): Float32Array {
  const counts = new Map<string, number>();
  const words = text.toLowerCase().match(WORD) ?? [text];
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  const sums = new Float64Array(dimensions);
  for (const [word, count] of counts) {
    const random = seededRandom(hash32(`${model}\u0000${word}`));
    for (let i = 0; i < dimensions; i++) sums[i] += count * (random() * 2 - 1);
  }
  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += sums[i] * sums[i];
  norm = Math.sqrt(norm) || 1;
  const vector = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) vector[i] = sums[i] / norm;
  return vector;
}
