import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  MediaReply,
  MediaRoutes,
  Rpc,
  type StagedFile,
  type TranscriptionFrame,
  type TranscriptionBody,
  type TranscriptionRequest as TranscriptionMessage,
  type TranslationRequest,
} from '@gateway/contracts';
import type { TranscriptionRequest, TranscriptionResult, TranscriptionTask, TranscriptionUsage, UploadedFile } from '@gateway/canonical';
import type { CatalogModel } from '@gateway/catalog';
import { DomainError, ErrorCode } from '@gateway/errors';
import { OBJECT_STORE, ObjectStore } from '@gateway/storage';
import { MediaCalls } from '../media/media-call';
import type { CallOutcome } from '../metering/metered-calls';
import { UpstreamCaller } from '../providers/upstream-caller';
import { malformedResponse, transcriptionUsageOf } from '@gateway/providers';
import { Observable } from 'rxjs';
import { FramedCalls } from '../metering/framed-calls';

const TEXT_TYPES: Record<string, string> = { text: 'text/plain; charset=utf-8', srt: 'text/plain; charset=utf-8', vtt: 'text/vtt; charset=utf-8' };

/**
 * `POST /v1/audio/transcriptions` and `/translations`. The edge staged the file in the object store;
 * the adapter streams it from there to the upstream (opened anew for each attempt), and the staged
 * object is deleted once the call is over, however it ended.
 *
 * Billing: the upstream's tokens when it reports tokens and the model prices tokens; otherwise
 * seconds of audio at `pricing.per_second` — the upstream's own seconds, else the duration the edge
 * read from the file's header. `text`, `srt` and `vtt` answers carry no usage, so the bill is never
 * read from the answer the client gets: `json` answers without a usage get the billed seconds.
 */
@Injectable()
export class TranscriptionsService {
  private readonly logger = new Logger(TranscriptionsService.name);

  constructor(
    private readonly calls: MediaCalls,
    private readonly framed: FramedCalls,
    private readonly upstream: UpstreamCaller,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
  ) {}

  transcribe(request: TranscriptionMessage): Promise<MediaReply> {
    return this.run(request, 'transcribe');
  }

  translate(request: TranslationRequest): Promise<MediaReply> {
    return this.run(request, 'translate');
  }

  /**
   * A transcription with `stream: true` (`inference.transcription-stream`): the upstream's events
   * passed on as they come. Billed the file's duration from the first event on (a client that
   * leaves midway pays for the audio the upstream was given), settled by the usage of the last
   * event, `transcript.text.done`, which carries what was billed when the upstream sent none.
   */
  stream(request: TranscriptionMessage, router: string): Observable<Exclude<TranscriptionFrame, { kind: 'heartbeat' }>> {
    const route = MediaRoutes.transcriptions;
    const call = { caller: request, route, family: Rpc.inferenceTranscriptionStream.family, model: request.body.model };
    return this.framed.frames<Exclude<TranscriptionFrame, { kind: 'heartbeat' | 'json' }>>(call, async (outcome, signal, emit) => {
      try {
        const model = this.calls.resolveModel(route, request.body.model);
        outcome.model = model.config.id;
        const canonical = this.toCanonical(request.body, 'transcribe', model);
        if (!canonical.stream) throw new DomainError(ErrorCode.InvalidRequest, 'This subject serves transcriptions with stream: true', 'stream');
        const {
          result,
          route: served,
          release,
        } = await this.upstream.withFallback(
          model.routes,
          signal,
          (adapter, upstreamRoute) => {
            if (!adapter.transcribe) throw new Error(`the ${upstreamRoute.adapter} adapter does not transcribe audio (catalog model ${model.config.id})`);
            return adapter.transcribe(upstreamRoute, canonical, signal);
          },
          model.config.id,
        );
        Object.assign(outcome, { provider: served.adapter, upstreamRoute: served.label });
        try {
          if (result.body.kind !== 'events') throw malformedResponse(`a ${result.body.kind} answer to a streamed transcription`);
          this.bill(outcome, undefined, model, canonical.durationSeconds);
          emit({ kind: 'start', router });
          for await (const event of result.body.events) {
            if (event.type !== 'transcript.text.done') {
              emit({ kind: 'event', data: JSON.stringify(event) });
              continue;
            }
            const billedSeconds = this.bill(outcome, transcriptionUsageOf(event.usage), model, canonical.durationSeconds);
            return emit({ kind: 'event', data: JSON.stringify(withBilledUsage(event, billedSeconds)) });
          }
          throw malformedResponse('a transcription stream that ended without transcript.text.done');
        } catch (error) {
          if (!signal.aborted) this.upstream.recordStreamFailure(served, model.config.id);
          throw error;
        } finally {
          release();
        }
      } finally {
        await this.discard(request.body.file);
      }
    });
  }

  private async run(request: TranscriptionMessage | TranslationRequest, task: TranscriptionTask): Promise<MediaReply> {
    const route = task === 'translate' ? MediaRoutes.translations : MediaRoutes.transcriptions;
    try {
      return await this.calls.run(request, route, async (outcome) => {
        const { body } = request;
        outcome.model = body.model;
        const model = this.calls.resolveModel(route, body.model);
        outcome.model = model.config.id;
        const canonical = this.toCanonical(request.body, task, model);
        const signal = new AbortController().signal;
        const { result, route: served } = await this.upstream.withFallback(model.routes, signal, (adapter, upstreamRoute) => {
          if (!adapter.transcribe) throw new Error(`the ${upstreamRoute.adapter} adapter does not transcribe audio (catalog model ${model.config.id})`);
          return adapter.transcribe(upstreamRoute, canonical, signal);
        });
        Object.assign(outcome, { provider: served.adapter, upstreamRoute: served.label });
        if (result.body.kind === 'events') {
          // `stream: true` on this subject (an edge of the release before the stream subject): the events, whole.
          const events: Record<string, unknown>[] = [];
          for await (const event of result.body.events) {
            if (event.type !== 'transcript.text.done') {
              events.push(event);
              continue;
            }
            events.push(withBilledUsage(event, this.bill(outcome, transcriptionUsageOf(event.usage), model, canonical.durationSeconds)));
            return { kind: 'sse', events: events.map((data) => ({ data: JSON.stringify(data) })) };
          }
          throw malformedResponse('a transcription stream without transcript.text.done');
        }
        const billedSeconds = this.bill(outcome, result.usage, model, canonical.durationSeconds);
        return this.reply(result, canonical, billedSeconds);
      });
    } finally {
      await this.discard(request.body.file);
    }
  }

  private async discard(file: StagedFile): Promise<void> {
    await this.store.delete(file.key).catch((error: unknown) => this.logger.warn(`could not delete the staged upload ${file.key}: ${String(error)}`));
  }

  private toCanonical(body: TranscriptionBody | TranslationRequest['body'], task: TranscriptionTask, model: CatalogModel): TranscriptionRequest {
    const transcription = body as TranscriptionBody;
    const format = body.response_format ?? 'json';
    const stream = task === 'transcribe' && transcription.stream === true;
    if (stream && format !== 'json' && format !== 'text') {
      throw new DomainError(ErrorCode.InvalidRequest, 'stream needs response_format json or text', 'stream');
    }
    if (transcription.timestamp_granularities?.length && format !== 'verbose_json') {
      throw new DomainError(ErrorCode.InvalidRequest, 'timestamp_granularities needs response_format verbose_json', 'timestamp_granularities');
    }
    return {
      task,
      model: model.config.id,
      file: this.uploaded(body.file),
      durationSeconds: body.file.duration_seconds ?? 0,
      responseFormat: format,
      language: task === 'transcribe' ? transcription.language : undefined,
      prompt: body.prompt,
      temperature: body.temperature,
      timestampGranularities: task === 'transcribe' ? transcription.timestamp_granularities : undefined,
      stream,
    };
  }

  private uploaded(file: StagedFile): UploadedFile {
    return {
      filename: file.filename,
      contentType: file.content_type,
      bytes: file.bytes,
      open: async () => {
        const stream = await this.store.getStream(file.key);
        if (!stream) throw new DomainError(ErrorCode.InvalidRequest, 'The uploaded file is gone from the staging store; send the request again', 'file');
        return stream;
      },
    };
  }

  /**
   * Fills the usage event from what the upstream reported (tokens, else its seconds) or, without
   * it, the duration the edge read; returns the seconds billed, or undefined when billed by tokens.
   */
  private bill(outcome: CallOutcome, usage: TranscriptionUsage | undefined, model: CatalogModel, measuredSeconds: number): number | undefined {
    if (usage?.type === 'tokens') {
      outcome.inputTokens = usage.inputTokens;
      outcome.outputTokens = usage.outputTokens;
      const { input, output } = model.config.pricing;
      if (input > 0 || output > 0) {
        outcome.audioMs = undefined;
        return undefined;
      }
    }
    const seconds = usage?.type === 'duration' ? usage.seconds : measuredSeconds;
    outcome.audioMs = Math.round(seconds * 1000);
    return outcome.audioMs / 1000;
  }

  private reply(result: TranscriptionResult, request: TranscriptionRequest, billedSeconds: number | undefined): MediaReply {
    if (result.body.kind === 'text') {
      return { kind: 'text', status: 200, contentType: TEXT_TYPES[request.responseFormat] ?? TEXT_TYPES.text, body: result.body.text };
    }
    if (result.body.kind !== 'json') throw malformedResponse('a streamed answer to a transcription without stream');
    const value = { ...result.body.value };
    if (value.usage === undefined && billedSeconds !== undefined) value.usage = { type: 'duration', seconds: billedSeconds };
    return { kind: 'json', status: 200, body: value };
  }
}

/** A stream's last event, carrying what was billed (`usage: {type: "duration", seconds}`) when the upstream reported no usage. */
function withBilledUsage(event: Record<string, unknown>, billedSeconds: number | undefined): Record<string, unknown> {
  return event.usage === undefined && billedSeconds !== undefined ? { ...event, usage: { type: 'duration', seconds: billedSeconds } } : event;
}
