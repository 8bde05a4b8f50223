/**
 * Canonical stream events → OpenAI Responses stream events.
 *
 * Every event is a named SSE event whose data repeats the name in `type` and carries an increasing
 * `sequence_number`. Output items open with `response.output_item.added` and close with
 * `response.output_item.done`; `openai`'s `ResponseStream` rebuilds the response from them and
 * then replaces it with the one in the terminal `response.completed` / `response.incomplete`.
 */
import { randomUUID } from 'node:crypto';
import type { CanonicalStreamEvent, StopReason, TokenLogprob, Usage } from '@gateway/canonical';
import type { WireError } from '../common/wire-error';
import { responsesStreamErrorFrame } from './error-body';
import { logprobsWithBytes, type RenderContext, responsesDeltaLogprobs, responsesItemIds } from '../common/render-common';
import {
  responsesEnvelope,
  responsesFunctionCallItem,
  responsesMessageItem,
  responsesOutputText,
  responsesReasoningItem,
  thinkingPart,
} from './render-responses';
import { eventFrame } from '../common/sse';
import type { StreamEncoder } from '../common/stream-encoder';

interface Meta {
  id: string;
  model: string;
  created: number;
}

/** The reasoning or message item being written; text items are written one at a time. */
interface TextItem {
  kind: 'reasoning' | 'message';
  id: string;
  outputIndex: number;
  text: string;
  logprobs?: TokenLogprob[];
  /** Reasoning only: the upstream's proof of it (Anthropic), sealed with the text when asked for. */
  signature?: string;
}

interface FunctionCallItem {
  id: string;
  outputIndex: number;
  callId: string;
  name: string;
  args: string;
  done: boolean;
}

export class ResponsesStreamEncoder implements StreamEncoder {
  private meta: Meta | undefined;
  private ids: ReturnType<typeof responsesItemIds> | undefined;
  private sequence = 0;
  /** Final form of each output item, by output index. */
  private readonly output: object[] = [];
  private current: TextItem | undefined;
  private readonly calls = new Map<number, FunctionCallItem>();
  private counts = { reasoning: 0, message: 0 };
  private stopReason: StopReason | undefined;
  private usage: Usage | undefined;
  private closed = false;
  private final: Record<string, unknown> | undefined;

  constructor(private readonly context: RenderContext) {}

  /** Whether reasoning items carry a summary: only when the client asked for one, as OpenAI answers. */
  private get summarized(): boolean {
    return this.context.reasoningSummary !== undefined;
  }

  encode(event: CanonicalStreamEvent): string[] {
    if (this.closed) return [];
    if (event.type === 'start') return this.start(event);
    if (this.meta) return this.encodeAfterStart(event);
    return [...this.start(undefined), ...this.encodeAfterStart(event)];
  }

  finish(): string[] {
    if (this.closed) return [];
    const frames = this.meta ? [] : this.start(undefined);
    if (this.stopReason === undefined) frames.push(...this.closeAll('stop'));
    return [...frames, ...this.terminal()];
  }

  finalResponse(): Record<string, unknown> | undefined {
    return this.final;
  }

  error(error: WireError, requestId?: string): string[] {
    this.closed = true;
    return [responsesStreamErrorFrame(error, requestId, this.sequence++)];
  }

  private encodeAfterStart(event: Exclude<CanonicalStreamEvent, { type: 'start' }>): string[] {
    switch (event.type) {
      case 'reasoning_delta':
        return this.context.excludeReasoning ? [] : this.textDelta('reasoning', event.text);
      case 'reasoning_signature':
        // Anthropic's proof of the reasoning being written: responses show it only inside `encrypted_content`.
        if (this.current?.kind === 'reasoning') this.current.signature = event.signature;
        return [];
      case 'text_delta':
        return this.textDelta('message', event.text, event.logprobs);
      case 'tool_call_start':
        return this.startCall(event.index, event.id, event.name);
      case 'tool_call_delta':
        return this.callDelta(event.index, event.argumentsDelta);
      case 'finish':
        return this.closeAll(event.stopReason);
      case 'usage':
        this.usage = event.usage;
        // Adapters send usage after `finish`: the terminal event waits for it.
        return this.stopReason === undefined ? [] : this.terminal();
    }
  }

  private start(event: Extract<CanonicalStreamEvent, { type: 'start' }> | undefined): string[] {
    this.meta = event
      ? { id: event.id, model: event.model, created: event.created }
      : { id: randomUUID().replace(/-/g, ''), model: this.context.request.model, created: Math.floor(Date.now() / 1000) };
    this.ids = responsesItemIds(this.meta.id);
    const response = this.envelope();
    return [this.event('response.created', { response }), this.event('response.in_progress', { response })];
  }

  // ---- reasoning and message items ----

  private textDelta(kind: TextItem['kind'], delta: string, logprobs?: TokenLogprob[]): string[] {
    const frames = this.current?.kind === kind ? [] : [...this.closeCurrent(), ...this.openText(kind)];
    const item = this.current as TextItem;
    item.text += delta;
    const where = { item_id: item.id, output_index: item.outputIndex };
    if (kind === 'reasoning') {
      if (this.summarized) frames.push(this.event('response.reasoning_summary_text.delta', { ...where, summary_index: 0, delta }));
    } else {
      if (logprobs) item.logprobs = [...(item.logprobs ?? []), ...logprobs];
      frames.push(this.event('response.output_text.delta', { ...where, content_index: 0, delta, logprobs: responsesDeltaLogprobs(logprobs) }));
    }
    return frames;
  }

  private openText(kind: TextItem['kind']): string[] {
    const ids = this.ids as ReturnType<typeof responsesItemIds>;
    const id = kind === 'reasoning' ? ids.reasoning(this.counts.reasoning++) : ids.message(this.counts.message++);
    const item: TextItem = { kind, id, outputIndex: this.output.length, text: '' };
    this.current = item;
    const where = { item_id: id, output_index: item.outputIndex };
    if (kind === 'reasoning') {
      this.output.push(responsesReasoningItem(id, ''));
      const added = this.event('response.output_item.added', { output_index: item.outputIndex, item: { id, type: 'reasoning', summary: [] } });
      if (!this.summarized) return [added];
      return [added, this.event('response.reasoning_summary_part.added', { ...where, summary_index: 0, part: { type: 'summary_text', text: '' } })];
    }
    this.output.push(responsesMessageItem(id, '', 'in_progress'));
    return [
      this.event('response.output_item.added', { output_index: item.outputIndex, item: responsesMessageItem(id, '', 'in_progress') }),
      this.event('response.content_part.added', { ...where, content_index: 0, part: responsesOutputText('') }),
    ];
  }

  private closeCurrent(): string[] {
    const item = this.current;
    if (!item) return [];
    this.current = undefined;
    const where = { item_id: item.id, output_index: item.outputIndex };
    if (item.kind === 'reasoning') {
      const sealed = this.context.reasoningSeal?.seal(thinkingPart(item.text, item.signature));
      const done = responsesReasoningItem(item.id, this.summarized ? item.text : '', sealed);
      this.output[item.outputIndex] = done;
      if (!this.summarized) return [this.event('response.output_item.done', { output_index: item.outputIndex, item: done })];
      return [
        this.event('response.reasoning_summary_text.done', { ...where, summary_index: 0, text: item.text }),
        this.event('response.reasoning_summary_part.done', { ...where, summary_index: 0, part: { type: 'summary_text', text: item.text } }),
        this.event('response.output_item.done', { output_index: item.outputIndex, item: done }),
      ];
    }
    const done = responsesMessageItem(item.id, item.text, 'completed', item.logprobs);
    this.output[item.outputIndex] = done;
    return [
      this.event('response.output_text.done', {
        ...where,
        content_index: 0,
        text: item.text,
        logprobs: item.logprobs ? logprobsWithBytes(item.logprobs) : [],
      }),
      this.event('response.content_part.done', { ...where, content_index: 0, part: responsesOutputText(item.text, item.logprobs) }),
      this.event('response.output_item.done', { output_index: item.outputIndex, item: done }),
    ];
  }

  // ---- function calls ----

  /** Function-call items stay open until `finish`, so argument deltas may arrive in any order. */
  private startCall(index: number, callId: string, name: string): string[] {
    const frames = this.closeCurrent();
    const ids = this.ids as ReturnType<typeof responsesItemIds>;
    const call: FunctionCallItem = { id: ids.functionCall(this.calls.size), outputIndex: this.output.length, callId, name, args: '', done: false };
    this.calls.set(index, call);
    const item = responsesFunctionCallItem(call.id, { id: callId, name }, '', 'in_progress');
    this.output.push(item);
    frames.push(this.event('response.output_item.added', { output_index: call.outputIndex, item }));
    return frames;
  }

  private callDelta(index: number, delta: string): string[] {
    const call = this.calls.get(index);
    if (!call || call.done) return []; // a delta for a call that never started has nowhere to go
    call.args += delta;
    return [this.event('response.function_call_arguments.delta', { item_id: call.id, output_index: call.outputIndex, delta })];
  }

  private closeCalls(): string[] {
    const frames: string[] = [];
    for (const call of this.calls.values()) {
      if (call.done) continue;
      call.done = true;
      const item = responsesFunctionCallItem(call.id, { id: call.callId, name: call.name }, call.args, 'completed');
      this.output[call.outputIndex] = item;
      frames.push(
        this.event('response.function_call_arguments.done', {
          item_id: call.id,
          output_index: call.outputIndex,
          name: call.name,
          arguments: call.args,
        }),
        this.event('response.output_item.done', { output_index: call.outputIndex, item }),
      );
    }
    return frames;
  }

  // ---- end of the response ----

  private closeAll(reason: StopReason): string[] {
    if (this.stopReason !== undefined) return [];
    this.stopReason = reason;
    const frames = this.closeCurrent();
    // Like the non-streaming reply, a reply without text or tool calls still has an (empty) message.
    if (this.counts.message === 0 && this.calls.size === 0) frames.push(...this.openText('message'), ...this.closeCurrent());
    frames.push(...this.closeCalls());
    return frames;
  }

  /** `response.completed`, or `response.incomplete` when generation was cut short. */
  private terminal(): string[] {
    this.closed = true;
    const response = this.envelope() as { status: string };
    this.final = response as Record<string, unknown>;
    const type = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    return [this.event(type, { response })];
  }

  private envelope(): object {
    const meta = this.meta as Meta;
    return responsesEnvelope(
      { id: meta.id, createdAt: meta.created, model: meta.model, output: this.output, stopReason: this.stopReason, usage: this.usage },
      this.context,
    );
  }

  private event(type: string, fields: Record<string, unknown>): string {
    return eventFrame(type, { type, ...fields, sequence_number: this.sequence++ });
  }
}
