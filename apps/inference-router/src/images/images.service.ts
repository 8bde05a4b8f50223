import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  GeneratedImage,
  ImageEditRequest as ImageEditMessage,
  StagedFile,
  ImageDefaults,
  ImageGenerationRequest,
  ImageQualities,
  ImageSizes,
  ImageStyles,
  MediaLimits,
  MediaReply,
  MediaRoutes,
} from '@gateway/contracts';
import type { CatalogModel } from '@gateway/catalog';
import { OBJECT_STORE, ObjectStore } from '@gateway/storage';
import { randomUUID } from 'node:crypto';
import type { GeneratedImageData, ImageEditRequest, ImageRequest, ImageResult, UploadedFile } from '@gateway/canonical';
import { MediaCalls } from '../media/media-call';
import type { CallOutcome } from '../metering/metered-calls';
import { UpstreamCaller } from '../providers/upstream-caller';
import { DomainError, ErrorCode } from '@gateway/errors';

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/**
 * The value of an image option: the client's, which must be one the model lists (when it lists
 * any); else our default when the model allows it; else the model's first listed value.
 */
function pick<T extends string>(field: string, requested: T | null | undefined, fallback: T, allowed: readonly T[], model: CatalogModel, listed?: string[]): T {
  const listedHere = allowed.filter((value) => listed?.includes(value));
  const offered = listedHere.length > 0 ? listedHere : [...allowed];
  if (requested !== undefined && requested !== null) {
    if (!offered.includes(requested))
      throw new DomainError(ErrorCode.InvalidRequest, `${field} must be one of ${offered.join(', ')} for ${model.config.id}`, field);
    return requested;
  }
  return offered.includes(fallback) ? fallback : offered[0];
}

/**
 * `POST /v1/images/generations`. The adapter returns image bytes; for `response_format: url` each
 * is stored as `images/<uuid>.<ext>` with the request's `public` flag and the edge makes the URL
 * (only the edge signs); for `b64_json` the data is returned and nothing is stored. Billed per
 * image (`units`), at the model's `pricing.per_item`.
 */
@Injectable()
export class ImagesService {
  private readonly logger = new Logger(ImagesService.name);

  constructor(
    private readonly calls: MediaCalls,
    private readonly upstream: UpstreamCaller,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
  ) {}

  generate(request: ImageGenerationRequest): Promise<MediaReply> {
    return this.calls.run(request, MediaRoutes.images, async (outcome) => {
      const { body } = request;
      outcome.model = body.model ?? '';
      const model = this.calls.resolveModel(MediaRoutes.images, body.model);
      outcome.model = model.config.id;
      const canonical = this.toImageRequest(model, request);
      const signal = new AbortController().signal;
      const { result, route } = await this.upstream.withFallback(model.routes, signal, (adapter, upstreamRoute) => {
        if (!adapter.generateImages) throw new Error(`the ${upstreamRoute.adapter} adapter does not generate images (catalog model ${model.config.id})`);
        return adapter.generateImages(upstreamRoute, canonical, signal);
      });
      Object.assign(outcome, { provider: route.adapter, upstreamRoute: route.label });
      return this.answer(result, body, outcome, model);
    });
  }

  /**
   * `POST /v1/images/edits`: as a generation, from the images (and mask) the edge staged in the
   * object store; the adapter streams them from there to the upstream (opened anew for each
   * attempt) and the staged objects are deleted once the call is over, however it ended.
   */
  async edit(request: ImageEditMessage): Promise<MediaReply> {
    const { body } = request;
    const staged = [...body.image, ...(body.mask ? [body.mask] : [])];
    try {
      return await this.calls.run(request, MediaRoutes.imageEdits, async (outcome) => {
        outcome.model = body.model ?? '';
        const model = this.calls.resolveModel(MediaRoutes.imageEdits, body.model);
        outcome.model = model.config.id;
        const canonical: ImageEditRequest = {
          ...this.toImageRequest(model, request),
          images: body.image.map((file) => this.uploaded(file, 'image')),
          mask: body.mask ? this.uploaded(body.mask, 'mask') : undefined,
          background: body.background,
          outputFormat: body.output_format,
        };
        const signal = new AbortController().signal;
        const { result, route } = await this.upstream.withFallback(model.routes, signal, (adapter, upstreamRoute) => {
          if (!adapter.editImages) throw new Error(`the ${upstreamRoute.adapter} adapter does not edit images (catalog model ${model.config.id})`);
          return adapter.editImages(upstreamRoute, canonical, signal);
        });
        Object.assign(outcome, { provider: route.adapter, upstreamRoute: route.label });
        return this.answer(result, body, outcome, model);
      });
    } finally {
      await Promise.all(
        staged.map((file) =>
          this.store.delete(file.key).catch((error: unknown) => this.logger.warn(`could not delete the staged upload ${file.key}: ${String(error)}`)),
        ),
      );
    }
  }

  /**
   * The client's answer, and the usage event's figures: the upstream's tokens when it reported
   * them (logged either way), and they are the bill when the model prices tokens; otherwise each
   * image returned costs `per_item`.
   */
  private async answer(
    result: ImageResult,
    body: { response_format?: string | null; public?: boolean | null },
    outcome: CallOutcome,
    model: CatalogModel,
  ): Promise<MediaReply> {
    const format = body.response_format ?? ImageDefaults.response_format;
    const isPublic = body.public ?? ImageDefaults.public;
    const images = await Promise.all(result.images.map((image) => (format === 'url' ? this.stored(image, isPublic) : this.inline(image))));
    const { usage } = result;
    if (usage) {
      outcome.inputTokens = usage.inputTokens;
      outcome.outputTokens = usage.outputTokens;
    }
    const { input, output } = model.config.pricing;
    outcome.units = usage && (input > 0 || output > 0) ? undefined : images.length;
    return { kind: 'images', created: Math.floor(Date.now() / 1000), images, ...(usage ? { usage: usage.raw } : {}) };
  }

  private uploaded(file: StagedFile, field: string): UploadedFile {
    return {
      filename: file.filename,
      contentType: file.content_type,
      bytes: file.bytes,
      open: async () => {
        const stream = await this.store.getStream(file.key);
        if (!stream) throw new DomainError(ErrorCode.InvalidRequest, 'The uploaded file is gone from the staging store; send the request again', field);
        return stream;
      },
    };
  }

  private toImageRequest(model: CatalogModel, request: ImageGenerationRequest | ImageEditMessage): ImageRequest {
    const { body } = request;
    const maxImages = Math.min(model.config.max_images ?? MediaLimits.imageCount, MediaLimits.imageCount);
    const n = body.n ?? ImageDefaults.n;
    if (n > maxImages) throw new DomainError(ErrorCode.InvalidRequest, `n must be at most ${maxImages} for ${model.config.id}`, 'n');
    return {
      model: model.config.id,
      prompt: body.prompt,
      n,
      size: pick('size', body.size, ImageDefaults.size, ImageSizes, model, model.config.sizes),
      quality: pick('quality', body.quality, ImageDefaults.quality, ImageQualities, model, model.config.qualities),
      style: pick('style', body.style, ImageDefaults.style, ImageStyles, model, model.config.styles),
      explicit: { quality: body.quality !== undefined && body.quality !== null, style: body.style !== undefined && body.style !== null },
      user: body.user ?? undefined,
    };
  }

  private async stored(image: GeneratedImageData, isPublic: boolean): Promise<GeneratedImage> {
    const key = `images/${randomUUID()}.${EXTENSIONS[image.contentType] ?? 'png'}`;
    await this.store.put(key, image.bytes, { contentType: image.contentType, public: isPublic });
    return { file: { key, public: isPublic }, revised_prompt: image.revisedPrompt };
  }

  private async inline(image: GeneratedImageData): Promise<GeneratedImage> {
    return { b64_json: image.bytes.toString('base64'), revised_prompt: image.revisedPrompt };
  }
}
