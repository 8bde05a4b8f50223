import { PNG } from 'pngjs';
import { hash32, randomInt, seededRandom } from './simulator-random';

/**
 * A real PNG of the requested size, derived from the seed (prompt and image index): 4 to 12
 * horizontal bands, each a colour from the seed shading left to right. Only one row per band is
 * computed and copied down, the pixels are given as RGB (pngjs then writes them without
 * converting each pixel), and with the PNG "Up" filter identical rows encode as zeros, so even
 * 1792x1024 takes milliseconds and tens of kilobytes.
 */
export function simulatedPng(seed: string, width: number, height: number): Buffer {
  const random = seededRandom(hash32(seed));
  const bandCount = randomInt(random, 4, 12);
  const rowBytes = width * 3;
  const rows = Array.from({ length: bandCount }, () => {
    const colour = [randomInt(random, 0, 255), randomInt(random, 0, 255), randomInt(random, 0, 255)];
    const row = Buffer.alloc(rowBytes);
    for (let x = 0; x < width; x++) {
      const shade = 0.35 + (0.65 * x) / Math.max(1, width - 1);
      row[x * 3] = Math.round(colour[0] * shade);
      row[x * 3 + 1] = Math.round(colour[1] * shade);
      row[x * 3 + 2] = Math.round(colour[2] * shade);
    }
    return row;
  });
  const data = Buffer.alloc(rowBytes * height);
  for (let y = 0; y < height; y++) rows[Math.floor((y * bandCount) / height)].copy(data, y * rowBytes);
  const rgb = { width, height, data } as PNG;
  return PNG.sync.write(rgb, { colorType: 2, inputColorType: 2, inputHasAlpha: false, filterType: 2 });
}
