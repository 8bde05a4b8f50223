/**
 * Canonical stream events → OpenAI `chat.completion.chunk` frames.
 *
 * Order on the wire, as OpenAI sends it: a role chunk, content / reasoning / tool-call deltas, a
 * chunk carrying `finish_reason`, then (with `stream_options.include_usage`) a usage chunk with
 * empty `choices`, then `data: [DONE]`.
 */
import { randomUUID } from 'node:crypto';
import type { CanonicalStreamEvent, StopReason, TokenLogprob, Usage } from '@gateway/canonical';
import { chatFinishReason, chatUsage, logprobsWithBytes, type RenderContext } from '../common/render-common';
import { dataFrame } from '../common/sse';
import type { StreamEncoder } from '../common/stream-encoder';
import type { WireError } from '../common/wire-error';
import { chatStreamErrorFrame } from './error-body';

interface ChunkMeta {
  id: string;
  model: string;
  created: number;
}

export class ChatStreamEncoder implements StreamEncoder {
  private meta: ChunkMeta | undefined;
  /** `data: ` and the chunks' JSON up to their delta (see `chunk`). */
  private chunkPrefix: string | undefined;
  private finishSent = false;
  private usageSent = false;
  private pendingUsage: Usage | undefined;
  private closed = false;
  /** Canonical tool-call index → chat index; chat indexes must be dense, from 0, in order of appearance. */
  private readonly toolIndexes = new Map<number, number>();

  constructor(private readonly context: RenderContext) {}

  encode(event: CanonicalStreamEvent): string[] {
    if (this.closed) return [];
    if (event.type === 'start') return this.start(event);
    if (this.meta) return this.encodeAfterStart(event);
    return [...this.start(undefined), ...this.encodeAfterStart(event)];
  }

  finish(): string[] {
    if (this.closed) return [];
    const frames = this.meta ? [] : this.start(undefined);
    // A stream that ended without a finish event still needs a finish_reason: SDKs require one.
    if (!this.finishSent) frames.push(...this.finishChunk('stop'));
    if (this.pendingUsage) frames.push(...this.usageChunk(this.pendingUsage));
    this.closed = true;
    return [...frames, dataFrame('[DONE]')];
  }

  error(error: WireError, requestId?: string): string[] {
    this.closed = true;
    return [chatStreamErrorFrame(error, requestId)];
  }

  private encodeAfterStart(event: Exclude<CanonicalStreamEvent, { type: 'start' }>): string[] {
    switch (event.type) {
      case 'reasoning_delta':
        return this.reasoningChunk(event.text);
      case 'reasoning_signature':
        return []; // Anthropic's proof of reasoning; chat has no field for it
      case 'text_delta':
        return [this.chunk({ content: event.text }, null, event.logprobs)];
      case 'tool_call_start':
        return [
          this.chunk({ tool_calls: [{ index: this.toolIndex(event.index), id: event.id, type: 'function', function: { name: event.name, arguments: '' } }] }),
        ];
      case 'tool_call_delta':
        return [this.chunk({ tool_calls: [{ index: this.toolIndex(event.index), function: { arguments: event.argumentsDelta } }] })];
      case 'finish':
        return this.finishChunk(event.stopReason);
      case 'usage':
        return this.usage(event.usage);
    }
  }

  private start(event: Extract<CanonicalStreamEvent, { type: 'start' }> | undefined): string[] {
    if (this.meta) return [];
    this.meta = event
      ? { id: event.id, model: event.model, created: event.created }
      : { id: `chatcmpl-${randomUUID()}`, model: this.context.request.model, created: Math.floor(Date.now() / 1000) };
    return [this.chunk({ role: 'assistant', content: '' })];
  }

  private reasoningChunk(text: string): string[] {
    if (this.context.excludeReasoning) return [];
    const delta: Record<string, unknown> = { reasoning: text };
    if (this.context.reasoningContentCompat) delta.reasoning_content = text;
    return [this.chunk(delta)];
  }

  private finishChunk(reason: StopReason): string[] {
    if (this.finishSent) return [];
    this.finishSent = true;
    const frames = [this.chunk({}, chatFinishReason(reason))];
    // Usage that arrived early still goes last, after the finish chunk.
    if (this.pendingUsage) frames.push(...this.usageChunk(this.pendingUsage));
    return frames;
  }

  private usage(usage: Usage): string[] {
    if (!this.finishSent) {
      this.pendingUsage = usage;
      return [];
    }
    return this.usageChunk(usage);
  }

  private usageChunk(usage: Usage): string[] {
    this.pendingUsage = undefined;
    if (!this.context.request.includeUsage || this.usageSent) return [];
    this.usageSent = true;
    return [dataFrame({ ...this.envelope(), choices: [], usage: chatUsage(usage) })];
  }

  private toolIndex(canonicalIndex: number): number {
    let index = this.toolIndexes.get(canonicalIndex);
    if (index === undefined) {
      index = this.toolIndexes.size;
      this.toolIndexes.set(canonicalIndex, index);
    }
    return index;
  }

  private envelope(): Record<string, unknown> {
    const meta = this.meta as ChunkMeta;
    return { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model };
  }

  /**
   * One chunk's frame: its JSON is the envelope, then `choices`, then (with include_usage) `usage`,
   * as `JSON.stringify` of that object would write it; the envelope's part is written once per
   * stream (`chunkPrefix`), not for every delta.
   */
  private chunk(delta: Record<string, unknown>, finishReason: string | null = null, logprobs?: TokenLogprob[]): string {
    this.chunkPrefix ??= `data: ${JSON.stringify(this.envelope()).slice(0, -1)},"choices":[{"index":0,"delta":`;
    const logprobsJson = logprobs ? JSON.stringify({ content: logprobsWithBytes(logprobs), refusal: null }) : 'null';
    // With include_usage, OpenAI marks every chunk but the last with `usage: null`.
    const usage = this.context.request.includeUsage ? ',"usage":null' : '';
    return `${this.chunkPrefix}${JSON.stringify(delta)},"logprobs":${logprobsJson},"finish_reason":${JSON.stringify(finishReason)}}]${usage}}\n\n`;
  }
}
