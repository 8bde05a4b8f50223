/**
 * Canonical stream events → Anthropic Messages stream events.
 *
 * `message_start` (+ `ping`), then content blocks one at a time (`content_block_start`, deltas,
 * `content_block_stop`), then `message_delta` with the stop reason and usage, then `message_stop`.
 * Adapters send usage after `finish`, so `message_delta` waits for it (or for `finish()`).
 */
import { randomUUID } from 'node:crypto';
import type { CanonicalStreamEvent, StopReason, Usage } from '@gateway/canonical';
import type { WireError } from '../common/wire-error';
import { messagesStreamErrorFrame } from './error-body';
import { messagesStopReason, messagesUsage, prefixedId, type RenderContext } from '../common/render-common';
import { eventFrame } from '../common/sse';
import type { StreamEncoder } from '../common/stream-encoder';

type BlockKind = 'thinking' | 'text' | 'tool_use';

interface OpenBlock {
  kind: BlockKind;
  index: number;
  /** A thinking block's signature was sent: it ends the block, later thinking goes to a new one. */
  signed?: boolean;
}

export class MessagesStreamEncoder implements StreamEncoder {
  private started = false;
  private nextIndex = 0;
  private current: OpenBlock | undefined;
  /** The last thinking block, for a signature that arrives after it closed. */
  private lastThinking: OpenBlock | undefined;
  /** Whether a text or tool_use block was sent (a reply of only thinking still gets an empty text block). */
  private hasAnswerBlock = false;
  /** Canonical tool-call index → content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private stop: { reason: StopReason; sequence?: string } | undefined;
  private usage: Usage | undefined;
  private closed = false;

  constructor(private readonly context: RenderContext) {}

  encode(event: CanonicalStreamEvent): string[] {
    if (this.closed) return [];
    if (event.type === 'start') return this.start(event);
    if (this.started) return this.encodeAfterStart(event);
    return [...this.start(undefined), ...this.encodeAfterStart(event)];
  }

  finish(): string[] {
    if (this.closed) return [];
    const frames = this.started ? [] : this.start(undefined);
    if (!this.stop) frames.push(...this.end({ reason: 'stop' }));
    return [...frames, ...this.messageEnd()];
  }

  error(error: WireError, requestId?: string): string[] {
    this.closed = true;
    return [messagesStreamErrorFrame(error, requestId)];
  }

  private encodeAfterStart(event: Exclude<CanonicalStreamEvent, { type: 'start' }>): string[] {
    switch (event.type) {
      case 'reasoning_delta':
        if (this.context.excludeReasoning) return [];
        return this.delta('thinking', { type: 'thinking_delta', thinking: event.text });
      case 'reasoning_signature':
        return this.context.excludeReasoning ? [] : this.signature(event.signature);
      case 'text_delta':
        return this.delta('text', { type: 'text_delta', text: event.text });
      case 'tool_call_start':
        return this.startToolUse(event.index, event.id, event.name);
      case 'tool_call_delta':
        return this.toolDelta(event.index, event.argumentsDelta);
      case 'finish':
        return this.end({ reason: event.stopReason, sequence: event.stopSequence });
      case 'usage':
        this.usage = event.usage;
        return this.stop ? this.messageEnd() : [];
    }
  }

  private start(event: Extract<CanonicalStreamEvent, { type: 'start' }> | undefined): string[] {
    this.started = true;
    const message = {
      id: prefixedId('msg_', event?.id ?? randomUUID().replace(/-/g, '')),
      type: 'message',
      role: 'assistant',
      model: event?.model ?? this.context.request.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // The input is known now (clients such as LangChain read it only here); the output comes with message_delta.
      usage: messagesUsage(event?.usage ?? { inputTokens: 0, outputTokens: 0 }),
    };
    return [eventFrame('message_start', { type: 'message_start', message }), eventFrame('ping', { type: 'ping' })];
  }

  // ---- content blocks ----

  /** A delta for a thinking or text block, opening the block first when another kind (or a signed thinking block) is open. */
  private delta(kind: 'thinking' | 'text', delta: object): string[] {
    const frames = this.current?.kind === kind && !this.current.signed ? [] : this.openBlock(kind, emptyBlock(kind));
    frames.push(this.blockDelta((this.current as OpenBlock).index, delta));
    return frames;
  }

  /**
   * Anthropic sends the signature last in its thinking block; a late one goes to the block it
   * signs. A signature with no unsigned thinking block to go to gets a block of its own, empty: how
   * Anthropic returns reasoning it does not show (`display: omitted`, and the reasoning among
   * `updates`), which the client must send back to continue the turn.
   */
  private signature(signature: string): string[] {
    const frames = this.lastThinking && !this.lastThinking.signed ? [] : this.openBlock('thinking', emptyBlock('thinking'));
    const block = this.lastThinking as OpenBlock;
    block.signed = true;
    frames.push(this.blockDelta(block.index, { type: 'signature_delta', signature }));
    return frames;
  }

  private startToolUse(toolIndex: number, id: string, name: string): string[] {
    const frames = this.openBlock('tool_use', { type: 'tool_use', id, name, input: {} });
    this.toolBlocks.set(toolIndex, (this.current as OpenBlock).index);
    return frames;
  }

  /**
   * Argument JSON for a tool call. Deltas normally follow their own `tool_call_start`; one for an
   * earlier call still goes to that call's block index, which the SDK accumulates by index.
   */
  private toolDelta(toolIndex: number, partialJson: string): string[] {
    const index = this.toolBlocks.get(toolIndex);
    if (index === undefined || partialJson === '') return [];
    return [this.blockDelta(index, { type: 'input_json_delta', partial_json: partialJson })];
  }

  private openBlock(kind: BlockKind, contentBlock: object): string[] {
    const frames = this.closeBlock();
    const block: OpenBlock = { kind, index: this.nextIndex++ };
    this.current = block;
    if (kind === 'thinking') this.lastThinking = block;
    else this.hasAnswerBlock = true;
    frames.push(eventFrame('content_block_start', { type: 'content_block_start', index: block.index, content_block: contentBlock }));
    return frames;
  }

  private closeBlock(): string[] {
    if (!this.current) return [];
    const index = this.current.index;
    this.current = undefined;
    return [eventFrame('content_block_stop', { type: 'content_block_stop', index })];
  }

  private blockDelta(index: number, delta: object): string {
    return eventFrame('content_block_delta', { type: 'content_block_delta', index, delta });
  }

  // ---- end of the message ----

  private end(stop: { reason: StopReason; sequence?: string }): string[] {
    if (this.stop) return [];
    this.stop = stop;
    // Like the non-streaming reply, a reply with no visible content still has an empty text block.
    const frames = this.hasAnswerBlock ? [] : this.openBlock('text', { type: 'text', text: '' });
    frames.push(...this.closeBlock());
    return frames;
  }

  private messageEnd(): string[] {
    this.closed = true;
    const stop = this.stop as { reason: StopReason; sequence?: string };
    const usage = messagesUsage(this.usage ?? { inputTokens: 0, outputTokens: 0 });
    return [
      eventFrame('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: messagesStopReason(stop.reason), stop_sequence: stop.reason === 'stop_sequence' ? (stop.sequence ?? null) : null },
        usage,
      }),
      eventFrame('message_stop', { type: 'message_stop' }),
    ];
  }
}

function emptyBlock(kind: 'thinking' | 'text'): object {
  return kind === 'thinking' ? { type: 'thinking', thinking: '', signature: '' } : { type: 'text', text: '' };
}
