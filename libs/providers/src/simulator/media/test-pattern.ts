import { createHash } from 'node:crypto';
import { encode } from 'jpeg-js';

/** Frame size for an aspect ratio: the long side `longSide` pixels, both sides even (what codecs expect). */
export function clipDimensions(aspect: { width: number; height: number }, longSide = 160): { width: number; height: number } {
  const even = (value: number) => Math.max(2, 2 * Math.round(value / 2));
  return aspect.width >= aspect.height
    ? { width: even(longSide), height: even((longSide * aspect.height) / aspect.width) }
    : { width: even((longSide * aspect.width) / aspect.height), height: even(longSide) };
}

function hslToRgb(hue: number, saturation: number, lightness: number): [number, number, number] {
  const k = (n: number) => (n + hue / 30) % 12;
  const a = saturation * Math.min(lightness, 1 - lightness);
  const f = (n: number) => lightness - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

export interface TestPatternOptions {
  width: number;
  height: number;
  frames: number;
  /** The same seed (the prompt) draws the same clip. */
  seed: string;
  quality?: number;
}

/**
 * A recognisable moving picture for the simulator: a gradient in colours picked from the seed with a
 * bright bar sweeping across it, one JPEG per frame.
 */
export function renderTestPattern(options: TestPatternOptions): Buffer[] {
  const { width, height, frames } = options;
  const digest = createHash('sha256').update(options.seed).digest();
  const hueA = (digest[0] / 255) * 360;
  const hueB = (hueA + 90 + (digest[1] / 255) * 180) % 360;
  const from = hslToRgb(hueA, 0.6, 0.35);
  const to = hslToRgb(hueB, 0.6, 0.55);
  const bar = hslToRgb((hueA + 180) % 360, 0.9, 0.8);
  const barWidth = Math.max(2, Math.round(width / 8));
  const images: Buffer[] = [];
  for (let frame = 0; frame < frames; frame++) {
    const data = Buffer.alloc(width * height * 4);
    const barStart = Math.round(((width - barWidth) * frame) / Math.max(1, frames - 1));
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const t = (x + y) / (width + height);
        const inBar = x >= barStart && x < barStart + barWidth;
        const offset = (y * width + x) * 4;
        for (let channel = 0; channel < 3; channel++) {
          data[offset + channel] = inBar ? bar[channel] : Math.round(from[channel] + (to[channel] - from[channel]) * t);
        }
        data[offset + 3] = 255;
      }
    }
    images.push(encode({ data, width, height }, options.quality ?? 75).data);
  }
  return images;
}
