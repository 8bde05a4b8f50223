import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode } from 'jpeg-js';
import { writeMjpegAvi } from './avi-writer';
import { clipDimensions, renderTestPattern } from './test-pattern';

interface RiffChunk {
  id: string;
  /** For RIFF and LIST chunks. */
  type?: string;
  /** Offset of the chunk header in the file. */
  at: number;
  data: Buffer;
  children: RiffChunk[];
}

/** An independent RIFF reader: walks the chunk tree the way a player does, checking every size. */
function parseChunks(file: Buffer, start: number, end: number): RiffChunk[] {
  const chunks: RiffChunk[] = [];
  let at = start;
  while (at < end) {
    expect(at + 8).toBeLessThanOrEqual(end);
    const id = file.toString('latin1', at, at + 4);
    const size = file.readUInt32LE(at + 4);
    expect(at + 8 + size).toBeLessThanOrEqual(end);
    const data = file.subarray(at + 8, at + 8 + size);
    const isList = id === 'RIFF' || id === 'LIST';
    chunks.push({
      id,
      at,
      type: isList ? data.toString('latin1', 0, 4) : undefined,
      data,
      children: isList ? parseChunks(file, at + 12, at + 8 + size) : [],
    });
    at += 8 + size + (size % 2);
  }
  expect(at).toBe(end);
  return chunks;
}

const find = (chunks: RiffChunk[], id: string, type?: string) => {
  const found = chunks.find((chunk) => chunk.id === id && (type === undefined || chunk.type === type));
  if (!found) throw new Error(`no ${id}${type ? ` ${type}` : ''} chunk`);
  return found;
};

describe('writeMjpegAvi', () => {
  const { width, height } = clipDimensions({ width: 16, height: 9 });
  const frames = renderTestPattern({ width, height, frames: 6, seed: 'a red fox in the snow' });
  const file = writeMjpegAvi({ width, height, framesPerSecond: 3, frames });

  it('writes a RIFF AVI whose chunk sizes add up to the file', () => {
    const [riff, ...rest] = parseChunks(file, 0, file.length);
    expect(rest).toEqual([]);
    expect(riff).toMatchObject({ id: 'RIFF', type: 'AVI ' });
    expect(riff.children.map((chunk) => `${chunk.id}${chunk.type ? `:${chunk.type}` : ''}`)).toEqual(['LIST:hdrl', 'LIST:movi', 'idx1']);
  });

  it('declares the clip in the main and stream headers: size, frame count and rate, MJPG video', () => {
    const [riff] = parseChunks(file, 0, file.length);
    const hdrl = find(riff.children, 'LIST', 'hdrl');
    const avih = find(hdrl.children, 'avih').data;
    expect(avih.length).toBe(56);
    expect(avih.readUInt32LE(0)).toBe(333_333); // microseconds per frame at 3 fps
    expect(avih.readUInt32LE(12) & 0x10).toBe(0x10); // has an index
    expect(avih.readUInt32LE(16)).toBe(6);
    expect(avih.readUInt32LE(24)).toBe(1);
    expect([avih.readUInt32LE(32), avih.readUInt32LE(36)]).toEqual([160, 90]);

    const strl = find(hdrl.children, 'LIST', 'strl');
    const strh = find(strl.children, 'strh').data;
    expect(strh.toString('latin1', 0, 8)).toBe('vidsMJPG');
    expect(strh.readUInt32LE(24) / strh.readUInt32LE(20)).toBe(3); // rate / scale
    expect(strh.readUInt32LE(32)).toBe(6);
    const strf = find(strl.children, 'strf').data;
    expect([strf.readUInt32LE(0), strf.readInt32LE(4), strf.readInt32LE(8)]).toEqual([40, 160, 90]);
    expect(strf.toString('latin1', 16, 20)).toBe('MJPG');
  });

  it('stores each frame as a decodable JPEG chunk, and the index points at every one', () => {
    const [riff] = parseChunks(file, 0, file.length);
    const movi = find(riff.children, 'LIST', 'movi');
    expect(movi.children.map((chunk) => chunk.id)).toEqual(Array(6).fill('00dc'));
    for (const [i, frameChunk] of movi.children.entries()) {
      expect(frameChunk.data.equals(frames[i])).toBe(true);
      const image = decode(frameChunk.data, { useTArray: true });
      expect([image.width, image.height]).toEqual([160, 90]);
    }
    const index = find(riff.children, 'idx1').data;
    expect(index.length).toBe(16 * 6);
    const moviFourcc = movi.at + 8;
    for (let i = 0; i < 6; i++) {
      const entry = index.subarray(i * 16, i * 16 + 16);
      expect(entry.toString('latin1', 0, 4)).toBe('00dc');
      expect(entry.readUInt32LE(4) & 0x10).toBe(0x10); // key frame
      expect(moviFourcc + entry.readUInt32LE(8)).toBe(movi.children[i].at);
      expect(entry.readUInt32LE(12)).toBe(frames[i].length);
    }
  });

  it('pads odd-sized frames to an even offset without counting the pad byte', () => {
    const odd = [Buffer.from([0xff, 0xd8, 0x01, 0xff, 0xd9]), Buffer.from([0xff, 0xd8, 0xff, 0xd9])];
    const avi = writeMjpegAvi({ width: 2, height: 2, framesPerSecond: 1, frames: odd });
    const [riff] = parseChunks(avi, 0, avi.length);
    const movi = find(riff.children, 'LIST', 'movi');
    expect(movi.children.map((chunk) => chunk.data.length)).toEqual([5, 4]);
    expect(movi.children[1].at % 2).toBe(0);
  });

  it('refuses an empty clip or a fractional frame rate', () => {
    expect(() => writeMjpegAvi({ width: 2, height: 2, framesPerSecond: 1, frames: [] })).toThrow(/at least one frame/);
    expect(() => writeMjpegAvi({ width: 2, height: 2, framesPerSecond: 2.5, frames })).toThrow(/framesPerSecond/);
  });
});

// A second opinion from ffmpeg's demuxer, on machines that have it (CI images usually do not).
const hasFfprobe = spawnSync('ffprobe', ['-version']).status === 0;

(hasFfprobe ? describe : describe.skip)('writeMjpegAvi, read by ffprobe', () => {
  it('is an MJPEG video of the written size, frame count and duration', () => {
    const { width, height } = clipDimensions({ width: 9, height: 16 });
    const frames = renderTestPattern({ width, height, frames: 8, seed: 'ffprobe' });
    const dir = mkdtempSync(join(tmpdir(), 'avi-writer-'));
    try {
      const path = join(dir, 'clip.avi');
      writeFileSync(path, writeMjpegAvi({ width, height, framesPerSecond: 4, frames }));
      const probe = spawnSync('ffprobe', ['-v', 'error', '-count_frames', '-show_streams', '-show_format', '-of', 'json', path], { encoding: 'utf8' });
      expect(probe.status).toBe(0);
      const { streams, format } = JSON.parse(probe.stdout);
      expect(streams).toEqual([expect.objectContaining({ codec_type: 'video', codec_name: 'mjpeg', width: 90, height: 160, nb_read_frames: '8' })]);
      expect(format).toMatchObject({ format_name: 'avi', duration: '2.000000' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('clipDimensions', () => {
  it.each([
    [
      { width: 16, height: 9 },
      { width: 160, height: 90 },
    ],
    [
      { width: 9, height: 16 },
      { width: 90, height: 160 },
    ],
    [
      { width: 1, height: 1 },
      { width: 160, height: 160 },
    ],
    [
      { width: 21, height: 9 },
      { width: 160, height: 68 },
    ],
  ])('%j → %j (long side 160, even sides)', (aspect, expected) => {
    expect(clipDimensions(aspect)).toEqual(expected);
  });
});
