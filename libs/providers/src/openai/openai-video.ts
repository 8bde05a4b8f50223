import type { UpstreamRoute } from '../provider-adapter';
import { retryAfterSeconds } from '../upstream-http';
import { type GeneratedVideo, VideoJobError, type VideoRequest, type VideoStatus } from '../video';

/** OpenAI's video object (`openai` SDK, `resources/videos.d.ts`), the fields we read. */
interface UpstreamVideo {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress?: number;
  seconds?: string;
  size?: string;
  error?: { code?: string; message?: string } | null;
}

/** Aspect ratio → OpenAI `size`, unless the route's `options.sizes` maps them itself. */
const DEFAULT_SIZES: Record<string, string> = { '16:9': '1280x720', '9:16': '720x1280' };
const REQUEST_TIMEOUT_MS = 60_000;

const EXTENSIONS: Record<string, string> = {
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/quicktime': 'mov',
  'video/x-msvideo': 'avi',
};

const isVideo = (value: unknown): value is UpstreamVideo =>
  typeof value === 'object' && value !== null && typeof (value as UpstreamVideo).id === 'string' && typeof (value as UpstreamVideo).status === 'string';

/**
 * OpenAI's video API: `POST /videos` (multipart, as the official SDK sends it) starts a job,
 * `GET /videos/{id}` is its status (polled by `generateVideo`), `GET /videos/{id}/content` is the
 * file. Route options: `sizes` (aspect ratio → upstream size), `seconds` (clip length sent upstream).
 */
export const openAIVideos = {
  async create(route: UpstreamRoute, request: VideoRequest, signal: AbortSignal): Promise<string> {
    const form = new FormData();
    form.append('model', route.upstreamModel);
    form.append('prompt', request.prompt);
    form.append('size', upstreamSize(route, request.size));
    if (route.options?.seconds !== undefined) form.append('seconds', String(route.options.seconds));
    return (await json(route, 'POST', '/videos', signal, form)).id;
  },

  async poll(route: UpstreamRoute, id: string, signal: AbortSignal): Promise<VideoStatus> {
    const video = await json(route, 'GET', `/videos/${encodeURIComponent(id)}`, signal);
    const seconds = Number(video.seconds);
    return {
      status: video.status,
      progress: video.progress,
      error: video.error?.message,
      duration: Number.isFinite(seconds) && seconds > 0 ? seconds : undefined,
      resolution: video.size,
    };
  },

  async download(route: UpstreamRoute, id: string, request: VideoRequest, finished: VideoStatus, signal: AbortSignal): Promise<GeneratedVideo> {
    const content = await call(route, 'GET', `/videos/${encodeURIComponent(id)}/content`, signal);
    const body = Buffer.from(await content.arrayBuffer());
    const declared = (content.headers.get('content-type') ?? '').split(';', 1)[0].trim().toLowerCase();
    const contentType = declared.startsWith('video/') ? declared : 'video/mp4';
    return {
      body,
      contentType,
      extension: EXTENSIONS[contentType] ?? 'mp4',
      duration: finished.duration ?? 0,
      resolution: finished.resolution ?? upstreamSize(route, request.size),
    };
  },
};

function upstreamSize(route: UpstreamRoute, size: string): string {
  const configured = route.options?.sizes;
  const sizes = typeof configured === 'object' && configured !== null ? (configured as Record<string, unknown>) : DEFAULT_SIZES;
  const mapped = sizes[size];
  if (typeof mapped !== 'string') {
    throw new VideoJobError('invalid_model_config', `the catalog maps no upstream size to ${size} for this model (route options.sizes)`, false);
  }
  return mapped;
}

async function json(route: UpstreamRoute, method: string, path: string, signal: AbortSignal, body?: FormData): Promise<UpstreamVideo> {
  const response = await call(route, method, path, signal, body);
  const parsed: unknown = await response.json().catch(() => undefined);
  if (!isVideo(parsed))
    throw new VideoJobError('upstream_error', `The video provider answered ${method} ${path} with something that is not a video object`, true);
  return parsed;
}

async function call(route: UpstreamRoute, method: string, path: string, signal: AbortSignal, body?: FormData): Promise<Response> {
  const headers: Record<string, string> = {};
  if (route.apiKey) headers.authorization = `Bearer ${route.apiKey}`;
  let response: Response;
  try {
    response = await fetch(`${(route.baseUrl ?? '').replace(/\/+$/, '')}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
    });
  } catch (error) {
    // Shutting down is not the provider's fault: the job is resumed elsewhere.
    if (signal.aborted) throw signal.reason;
    const timedOut = (error as Error).name === 'TimeoutError';
    throw new VideoJobError(
      timedOut ? 'upstream_timeout' : 'upstream_unreachable',
      timedOut ? 'The video provider did not answer in time' : 'The video provider could not be reached',
      true,
    );
  }
  if (response.ok) return response;
  const text = await response.text().catch(() => '');
  let message = text.slice(0, 500);
  try {
    message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
  } catch {
    // not JSON: keep the text
  }
  const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
  throw new VideoJobError(
    retryable ? 'upstream_error' : 'upstream_rejected',
    `The video provider answered ${response.status}${message ? `: ${message}` : ''}`,
    retryable,
    {
      status: response.status,
      retryAfterSeconds: response.status === 429 ? wholeSeconds(retryAfterSeconds(response.headers.get('retry-after') ?? undefined)) : undefined,
    },
  );
}

const wholeSeconds = (seconds: number | undefined) => (seconds === undefined ? undefined : Math.ceil(seconds));
