/**
 * A Motion-JPEG AVI (RIFF) writer: enough of the format for every player and ffmpeg to read a short
 * clip, without ffmpeg. Layout:
 *
 *   RIFF 'AVI '
 *     LIST 'hdrl'  avih (main header) + LIST 'strl' (strh stream header + strf BITMAPINFOHEADER)
 *     LIST 'movi'  one '00dc' chunk per JPEG frame
 *     idx1         one 16-byte entry per frame (offsets from the 'movi' fourcc)
 */
export interface MjpegClip {
  width: number;
  height: number;
  framesPerSecond: number;
  /** Baseline JPEG images, all width × height. */
  frames: Buffer[];
}

const AVIF_HASINDEX = 0x10;
const AVIIF_KEYFRAME = 0x10;
const FRAME_CHUNK_ID = '00dc';

function fourcc(code: string): Buffer {
  if (code.length !== 4) throw new Error(`fourcc must be 4 characters: ${code}`);
  return Buffer.from(code, 'latin1');
}

function chunk(id: string, data: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(data.length, 4);
  // Chunks start on even offsets; the size field does not count the pad byte.
  return Buffer.concat(data.length % 2 === 1 ? [header, data, Buffer.alloc(1)] : [header, data]);
}

function list(type: string, children: Buffer[]): Buffer {
  return chunk('LIST', Buffer.concat([fourcc(type), ...children]));
}

function mainHeader(clip: MjpegClip, maxFrame: number): Buffer {
  const avih = Buffer.alloc(56);
  avih.writeUInt32LE(Math.round(1_000_000 / clip.framesPerSecond), 0); // microseconds per frame
  avih.writeUInt32LE(maxFrame * clip.framesPerSecond, 4); // max bytes per second
  avih.writeUInt32LE(0, 8); // padding granularity
  avih.writeUInt32LE(AVIF_HASINDEX, 12);
  avih.writeUInt32LE(clip.frames.length, 16); // total frames
  avih.writeUInt32LE(0, 20); // initial frames
  avih.writeUInt32LE(1, 24); // streams
  avih.writeUInt32LE(maxFrame, 28); // suggested buffer size
  avih.writeUInt32LE(clip.width, 32);
  avih.writeUInt32LE(clip.height, 36);
  return chunk('avih', avih); // 16 reserved bytes stay zero
}

function streamHeader(clip: MjpegClip, maxFrame: number): Buffer {
  const strh = Buffer.alloc(56);
  strh.write('vids', 0, 'latin1');
  strh.write('MJPG', 4, 'latin1');
  strh.writeUInt32LE(0, 8); // flags
  strh.writeUInt16LE(0, 12); // priority
  strh.writeUInt16LE(0, 14); // language
  strh.writeUInt32LE(0, 16); // initial frames
  strh.writeUInt32LE(1, 20); // scale: rate / scale = frames per second
  strh.writeUInt32LE(clip.framesPerSecond, 24); // rate
  strh.writeUInt32LE(0, 28); // start
  strh.writeUInt32LE(clip.frames.length, 32); // length, in frames
  strh.writeUInt32LE(maxFrame, 36); // suggested buffer size
  strh.writeInt32LE(-1, 40); // quality: default
  strh.writeUInt32LE(0, 44); // sample size: varies per frame
  strh.writeInt16LE(0, 48); // frame rectangle: left, top, right, bottom
  strh.writeInt16LE(0, 50);
  strh.writeInt16LE(clip.width, 52);
  strh.writeInt16LE(clip.height, 54);
  return chunk('strh', strh);
}

function streamFormat(clip: MjpegClip): Buffer {
  const bitmapInfo = Buffer.alloc(40);
  bitmapInfo.writeUInt32LE(40, 0); // header size
  bitmapInfo.writeInt32LE(clip.width, 4);
  bitmapInfo.writeInt32LE(clip.height, 8);
  bitmapInfo.writeUInt16LE(1, 12); // planes
  bitmapInfo.writeUInt16LE(24, 14); // bits per pixel once decoded
  bitmapInfo.write('MJPG', 16, 'latin1'); // compression
  bitmapInfo.writeUInt32LE(clip.width * clip.height * 3, 20); // decoded image size
  return chunk('strf', bitmapInfo); // resolution and palette fields stay zero
}

export function writeMjpegAvi(clip: MjpegClip): Buffer {
  if (clip.frames.length === 0) throw new Error('an AVI needs at least one frame');
  if (!Number.isInteger(clip.framesPerSecond) || clip.framesPerSecond <= 0) throw new Error('framesPerSecond must be a positive integer');
  const maxFrame = Math.max(...clip.frames.map((frame) => frame.length));
  const header = list('hdrl', [mainHeader(clip, maxFrame), list('strl', [streamHeader(clip, maxFrame), streamFormat(clip)])]);

  const frameChunks: Buffer[] = [];
  const index = Buffer.alloc(16 * clip.frames.length);
  let offset = 4; // the first chunk follows the 'movi' fourcc
  clip.frames.forEach((frame, i) => {
    const framed = chunk(FRAME_CHUNK_ID, frame);
    index.write(FRAME_CHUNK_ID, i * 16, 'latin1');
    index.writeUInt32LE(AVIIF_KEYFRAME, i * 16 + 4);
    index.writeUInt32LE(offset, i * 16 + 8);
    index.writeUInt32LE(frame.length, i * 16 + 12);
    offset += framed.length;
    frameChunks.push(framed);
  });
  const body = Buffer.concat([fourcc('AVI '), header, list('movi', frameChunks), chunk('idx1', index)]);
  return chunk('RIFF', body);
}
