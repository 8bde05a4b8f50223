import type { CanonicalRequest, CanonicalResponse, CanonicalStreamEvent } from '@gateway/canonical';
import type { EmbeddingRequest, EmbeddingResult, ImageEditRequest, ImageRequest, ImageResult, ModerationRequest, ModerationResult } from '@gateway/canonical';
import type { TranscriptionRequest, TranscriptionResult } from '@gateway/canonical';
import { fromOpenAIAudio, openAIAudioBody, openAIAudioEvents } from './openai-audio';
import type { ProviderAdapter, UpstreamRoute } from '../provider-adapter';
import { countTextsTokens } from '../token-count';
import { UpstreamHttpClient, joinUrl, malformedResponse, type UpstreamHttpOptions } from '../upstream-http';
import { NO_ITEMS } from '../sse-reader';
import {
  fromOpenAIEmbeddings,
  fromOpenAIImages,
  imageUsageOf,
  fromOpenAIModeration,
  sniffImageType,
  toOpenAIEmbeddingsBody,
  toOpenAIImageEditParts,
  toOpenAIImagesBody,
} from './openai-media';
import { multipartBody } from '../multipart-body';
import { fromOpenAIResponse, OpenAIStreamMapper, toOpenAIRequest, type OpenAIChatChunk } from './openai-mapping';
import { toOpenAICountRequest } from './openai-token-count';
import { inputTokensOf, unlessNotServed } from '../upstream-count';
import { openAIVideos } from './openai-video';
import { openAISpeech } from './openai-speech';
import type { SpeechCall, SpeechStream } from '@gateway/canonical';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** OpenAI Chat Completions, and any server that speaks it (vLLM, Ollama, OpenRouter, Azure-style proxies…). */
export class OpenAIAdapter implements ProviderAdapter {
  private readonly http: UpstreamHttpClient;

  constructor(options?: UpstreamHttpOptions) {
    this.http = new UpstreamHttpClient(options);
  }

  async complete(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): Promise<CanonicalResponse> {
    const body = toOpenAIRequest(request, route.upstreamModel, false);
    const response = await this.http.postJson(chatCompletionsUrl(route), authHeaders(route), body, signal);
    return fromOpenAIResponse(response, request);
  }

  stream(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): AsyncIterable<CanonicalStreamEvent> {
    const mapper = new OpenAIStreamMapper(request);
    let done = false;
    return this.http.streamSse(chatCompletionsUrl(route), authHeaders(route), () => toOpenAIRequest(request, route.upstreamModel, true), signal, {
      event: (event) => {
        // Read on after [DONE] (ignoring what follows) instead of closing, so the body ends cleanly and the socket goes back to the pool.
        if (done) return NO_ITEMS;
        if (event.data.trim() === '[DONE]') {
          done = true;
          return mapper.end();
        }
        return mapper.map(parseChunk(event.data));
      },
      end: () => (done ? NO_ITEMS : mapper.end()), // servers that omit [DONE]; end() throws if the stream was cut short
    });
  }

  /** OpenAI's `POST /responses/input_tokens`; compatible servers without it answer 404 (undefined: the router counts). */
  countInputTokens(route: UpstreamRoute, request: CanonicalRequest, signal: AbortSignal): Promise<number | undefined> {
    return unlessNotServed(async () =>
      inputTokensOf(
        await this.http.postJson(endpointUrl(route, 'responses/input_tokens'), authHeaders(route), toOpenAICountRequest(request, route.upstreamModel), signal),
      ),
    );
  }

  async embed(route: UpstreamRoute, request: EmbeddingRequest, signal: AbortSignal): Promise<EmbeddingResult> {
    const response = await this.http.postJson(
      endpointUrl(route, 'embeddings'),
      authHeaders(route),
      toOpenAIEmbeddingsBody(request, route.upstreamModel),
      signal,
    );
    const { vectors, promptTokens } = fromOpenAIEmbeddings(response, request.inputs.length);
    // Servers that report no usage are counted like the simulator, so metering never sees zero.
    return { vectors, inputTokens: promptTokens ?? countTextsTokens(request.inputs).reduce((sum, tokens) => sum + tokens, 0) };
  }

  async moderate(route: UpstreamRoute, request: ModerationRequest, signal: AbortSignal): Promise<ModerationResult> {
    const body = { model: route.upstreamModel, input: request.inputs };
    const response = await this.http.postJson(endpointUrl(route, 'moderations'), authHeaders(route), body, signal);
    return fromOpenAIModeration(response, request.inputs.length);
  }

  async generateImages(route: UpstreamRoute, request: ImageRequest, signal: AbortSignal): Promise<ImageResult> {
    const response = await this.http.postJson(
      endpointUrl(route, 'images/generations'),
      authHeaders(route),
      toOpenAIImagesBody(request, route.upstreamModel),
      signal,
    );
    const images = [];
    for (const image of fromOpenAIImages(response, request.n)) {
      const bytes = image.b64 !== undefined ? Buffer.from(image.b64, 'base64') : await this.http.getBytes(image.url!, signal);
      images.push({ bytes, contentType: sniffImageType(bytes), revisedPrompt: image.revisedPrompt });
    }
    return { images, usage: imageUsageOf(response) };
  }

  /** `POST /images/edits`: the images and mask re-streamed from the store as multipart. */
  async editImages(route: UpstreamRoute, request: ImageEditRequest, signal: AbortSignal): Promise<ImageResult> {
    const body = multipartBody(toOpenAIImageEditParts(request, route.upstreamModel));
    const headers = { ...authHeaders(route), 'content-type': body.contentType };
    const { text } = await this.http.postStream(endpointUrl(route, 'images/edits'), headers, body.stream, body.length, signal);
    let response: unknown;
    try {
      response = JSON.parse(text);
    } catch {
      throw malformedResponse('an image edit answer that is not JSON', text.slice(0, 1000));
    }
    const images = [];
    for (const image of fromOpenAIImages(response, request.n)) {
      const bytes = image.b64 !== undefined ? Buffer.from(image.b64, 'base64') : await this.http.getBytes(image.url!, signal);
      images.push({ bytes, contentType: sniffImageType(bytes), revisedPrompt: image.revisedPrompt });
    }
    return { images, usage: imageUsageOf(response) };
  }

  /** `POST /audio/transcriptions` or `/audio/translations`: the file re-streamed from the store as multipart. */
  async transcribe(route: UpstreamRoute, request: TranscriptionRequest, signal: AbortSignal): Promise<TranscriptionResult> {
    const body = openAIAudioBody(request, route.upstreamModel);
    const path = request.task === 'translate' ? 'audio/translations' : 'audio/transcriptions';
    const headers = { ...authHeaders(route), 'content-type': body.contentType };
    if (request.stream) {
      const chunks = await this.http.postUploadStreamed(endpointUrl(route, path), headers, body.stream, body.length, signal);
      return { body: { kind: 'events', events: openAIAudioEvents(chunks) } };
    }
    const { text } = await this.http.postStream(endpointUrl(route, path), headers, body.stream, body.length, signal);
    return fromOpenAIAudio(request, text);
  }

  /** `POST /audio/speech`, streamed back as it arrives (see `openAISpeech`). */
  speak(route: UpstreamRoute, request: SpeechCall, signal: AbortSignal): Promise<SpeechStream> {
    return openAISpeech(this.http, endpointUrl(route, 'audio/speech'), authHeaders(route), request, route.upstreamModel, signal);
  }

  /** Closes the connection pool (on shutdown). */
  /** OpenAI's video API (see `openAIVideos`): `POST /videos`, `GET /videos/{id}`, then its content. */
  readonly createVideo = openAIVideos.create;
  readonly pollVideo = openAIVideos.poll;
  readonly downloadVideo = openAIVideos.download;

  close(): Promise<void> {
    return this.http.close();
  }
}

export function chatCompletionsUrl(route: UpstreamRoute): string {
  return endpointUrl(route, 'chat/completions');
}

export function endpointUrl(route: UpstreamRoute, path: string): string {
  return joinUrl(route.baseUrl ?? OPENAI_DEFAULT_BASE_URL, path);
}

/** No key, no header: local servers (vLLM, Ollama) often run without authentication. */
function authHeaders(route: UpstreamRoute): Record<string, string> {
  return route.apiKey ? { authorization: `Bearer ${route.apiKey}` } : {};
}

function parseChunk(data: string): OpenAIChatChunk {
  try {
    return JSON.parse(data) as OpenAIChatChunk;
  } catch {
    throw malformedResponse('a stream chunk that is not JSON', data.slice(0, 1000));
  }
}
