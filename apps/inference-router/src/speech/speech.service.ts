import { Injectable } from '@nestjs/common';
import { CatalogModel, ModelCatalog } from '@gateway/catalog';
import { Rpc, SPEECH_CHUNK_BYTES, SPEECH_ROUTE, SpeechDefaults, SpeechFrame, SpeechRequest, SpeechUsage, speechCharacters } from '@gateway/contracts';
import type { SpeechCall } from '@gateway/canonical';
import { DomainError, ErrorCode } from '@gateway/errors';
import { Observable } from 'rxjs';
import { FramedCalls } from '../metering/framed-calls';
import { UpstreamCaller } from '../providers/upstream-caller';

/**
 * `POST /v1/audio/speech`: the model and voice checked against the catalog, the adapter's audio
 * passed on in frames as it comes (never held whole). Billed from the upstream's token usage when it
 * reports one, else by the input's characters at the model's `pricing.characters`.
 */
@Injectable()
export class SpeechService {
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly framed: FramedCalls,
    private readonly upstream: UpstreamCaller,
  ) {}

  speak(request: SpeechRequest, router: string): Observable<Exclude<SpeechFrame, { kind: 'heartbeat' }>> {
    const call = { caller: request, route: SPEECH_ROUTE, family: Rpc.inferenceSpeech.family, model: request.body.model };
    return this.framed.frames<Exclude<SpeechFrame, { kind: 'heartbeat' | 'json' }>>(call, async (outcome, signal, emit) => {
      const model = this.resolveModel(request.body.model);
      outcome.model = model.config.id;
      const speech = this.toCall(model, request);
      // Billed by characters unless the upstream reports tokens; set before any audio, so a
      // client that leaves midway pays for the input the upstream was asked to speak.
      outcome.characters = speechCharacters(speech.input);
      const { result, route, release } = await this.upstream.withFallback(
        model.routes,
        signal,
        (adapter, upstreamRoute) => {
          if (!adapter.speak) throw new Error(`the ${upstreamRoute.adapter} adapter does not speak (catalog model ${model.config.id})`);
          return adapter.speak(upstreamRoute, speech, signal);
        },
        model.config.id,
      );
      Object.assign(outcome, { provider: route.adapter, upstreamRoute: route.label });
      try {
        emit({ kind: 'start', contentType: result.contentType, router });
        const usage: SpeechUsage = { input_characters: outcome.characters };
        for await (const event of result.events) {
          if (event.kind === 'usage') {
            outcome.inputTokens = event.inputTokens;
            outcome.outputTokens = event.outputTokens;
            outcome.characters = undefined;
            Object.assign(usage, {
              input_tokens: event.inputTokens,
              output_tokens: event.outputTokens,
              total_tokens: event.inputTokens + event.outputTokens,
            });
            continue;
          }
          for (let offset = 0; offset < event.bytes.length; offset += SPEECH_CHUNK_BYTES) {
            emit({ kind: 'audio', data: event.bytes.subarray(offset, offset + SPEECH_CHUNK_BYTES).toString('base64') });
          }
        }
        emit({ kind: 'done', usage });
      } catch (error) {
        if (!signal.aborted) this.upstream.recordStreamFailure(route, model.config.id);
        throw error;
      } finally {
        release();
      }
    });
  }

  /** The catalog model named: unknown, 404; serving other endpoints, 400 naming them. */
  private resolveModel(requested: string): CatalogModel {
    const model = this.catalog.get(requested);
    if (!model) throw new DomainError(ErrorCode.NotFound, `The model '${requested}' does not exist or is not available to you`, 'model');
    if (!model.config.endpoints.includes(SPEECH_ROUTE)) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `The model '${requested}' serves ${model.config.endpoints.join(', ') || 'no endpoint'}, not ${SPEECH_ROUTE}`,
        'model',
      );
    }
    return model;
  }

  /**
   * The call: a voice name must be one of the model's catalog `voices` (when it lists any; `{id}`
   * goes to the upstream as is), the format one of its `metadata.response_formats` (when listed).
   */
  private toCall(model: CatalogModel, request: SpeechRequest): SpeechCall {
    const { body } = request;
    const voices = model.config.voices ?? [];
    if (typeof body.voice === 'string' && voices.length > 0 && !voices.includes(body.voice)) {
      throw new DomainError(ErrorCode.InvalidRequest, `voice must be one of ${voices.join(', ')} for ${model.config.id}, or {id} of a custom voice`, 'voice');
    }
    const format = body.response_format ?? SpeechDefaults.response_format;
    const formats = model.config.metadata?.['response_formats'];
    if (Array.isArray(formats) && !formats.includes(format)) {
      throw new DomainError(ErrorCode.InvalidRequest, `response_format must be one of ${formats.join(', ')} for ${model.config.id}`, 'response_format');
    }
    return {
      model: model.config.id,
      input: body.input,
      voice: typeof body.voice === 'string' ? body.voice : { id: body.voice.id },
      ...(body.instructions !== undefined && body.instructions !== null ? { instructions: body.instructions } : {}),
      format,
      speed: body.speed ?? SpeechDefaults.speed,
      speedSet: body.speed !== undefined && body.speed !== null,
      ...(body.stream_format !== undefined && body.stream_format !== null ? { streamFormat: body.stream_format } : {}),
    };
  }
}
