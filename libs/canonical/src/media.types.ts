import type { UploadedFile } from './audio.types';
import type { ImageQuality, ImageSize, ImageStyle, ModerationCategory } from '@gateway/contracts';

/** An embeddings call as the adapters see it: validated, the model resolved, inputs always a list. */
export interface EmbeddingRequest {
  /** The public model id. */
  model: string;
  inputs: string[];
  /** Vector size: the client's `dimensions`, else the model's default (`metadata.dimensions`), if any. */
  dimensions?: number;
  /** Whether the client asked for `dimensions` (the openai adapter sends only what was asked). */
  dimensionsRequested: boolean;
  /** The client's encoding, asked of the upstream too (the vectors are the same either way). */
  encoding: 'float' | 'base64';
  user?: string;
}

export interface EmbeddingResult {
  /** One float32 vector per input, in input order. */
  vectors: Float32Array[];
  inputTokens: number;
}

export interface ModerationRequest {
  model: string;
  inputs: string[];
}

export interface ModerationVerdict {
  flagged: boolean;
  categories: Record<ModerationCategory, boolean>;
  category_scores: Record<ModerationCategory, number>;
}

export interface ModerationResult {
  /** The upstream's id, when it gave one. */
  id?: string;
  results: ModerationVerdict[];
}

export interface ImageRequest {
  model: string;
  prompt: string;
  n: number;
  size: ImageSize;
  quality: ImageQuality;
  style: ImageStyle;
  /** What the client set explicitly (the openai adapter sends only those of quality and style). */
  explicit: { quality: boolean; style: boolean };
  user?: string;
}

/** An edit of one or more uploaded images (`/images/edits`): the generation's options, the images, a mask. */
export interface ImageEditRequest extends ImageRequest {
  images: UploadedFile[];
  mask?: UploadedFile;
  background?: string;
  outputFormat?: string;
}

export interface GeneratedImageData {
  bytes: Buffer;
  /** `image/png`, `image/jpeg` or `image/webp`. */
  contentType: string;
  revisedPrompt?: string;
}

/** The tokens an image upstream reported (GPT image models do), and its `usage` object as it sent it. */
export interface ImageUsage {
  inputTokens: number;
  outputTokens: number;
  raw: Record<string, unknown>;
}

export interface ImageResult {
  images: GeneratedImageData[];
  /** The upstream's `usage`, when it reported one with whole token counts. */
  usage?: ImageUsage;
}
