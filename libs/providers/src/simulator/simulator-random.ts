/**
 * Deterministic randomness for the simulator: the same input always gives the same output, on
 * every machine and run, so tests and demos can rely on exact replies.
 */

/** 32-bit FNV-1a over the UTF-16 code units of `text`. Fast, stable, good enough spread for choosing words. */
export function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** `hash32` as 8 hex digits, for ids and signatures. */
export function hashHex(text: string): string {
  return hash32(text).toString(16).padStart(8, '0');
}

/** mulberry32: a tiny seeded PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max] from a PRNG. */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}
