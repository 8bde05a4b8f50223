import type { CanonicalMessage, CanonicalRequest, ContentPart, StopReason, TokenLogprob, ToolCall, Usage } from '@gateway/canonical';
import { countExactTokens, countOutputTokens, countPromptTokens, splitTokenPieces, type TokenPiece } from '../token-count';
import { simulateDecisionTurn } from './simulator-decision';
import { pieceLogprobs } from './simulator-logprobs';
import { hash32, hashHex, randomInt, seededRandom } from './simulator-random';
import { schemaInPrompt } from './simulator-prompt-schema';
import { quote, sentences } from './simulator-text';
import { chooseToolCalls, sampleJson } from './simulator-tools';

/** What shapes a simulated reply besides the request (see `SimulatorOptions`). */
export interface TurnOptions {
  /** Reason even when the request does not ask for it (a "thinking" model). */
  alwaysReason: boolean;
  /** Words in the reply body; by default 16–31, chosen from the reply key. */
  replyWords?: number;
}

/** Everything one simulated call produces, already cut by stop strings and `maxTokens`. */
export interface SimulatedTurn {
  reasoning: TokenPiece[];
  signature?: string;
  text: TokenPiece[];
  /** One entry per text piece, when the request asked for logprobs. */
  logprobs?: TokenLogprob[];
  toolCalls: ToolCall[];
  stopReason: StopReason;
  stopSequence?: string;
  usage: Usage;
}

/**
 * Simulates one assistant turn of `model` for `request`. Deterministic: the reply is keyed by a
 * hash of the model and the last message, so the same conversation always gets the same answer.
 * Output order is reasoning, then text, then tool calls; `maxTokens` is spent in that order.
 * A one-token decision prompt with logprobs is answered with a label instead (`simulator-decision.ts`).
 */
export function simulateTurn(model: string, request: CanonicalRequest, options: TurnOptions): SimulatedTurn {
  const decision = simulateDecisionTurn(request);
  if (decision) return decision;
  const conversation = readConversation(request.messages);
  const seedKey = `${model}\u0000${conversation.lastText}`;
  const random = seededRandom(hash32(seedKey));
  const toolCalls = chooseToolCalls(request, conversation.lastUserText, seedKey);
  const reasons = options.alwaysReason || request.reasoning?.enabled === true;

  const reasoningText = reasons ? reasoningFor(conversation, toolCalls, random) : '';
  const replyText =
    toolCalls.length > 0
      ? `I will call ${toolCalls.map((call) => call.name).join(' and ')}.`
      : formattedReply(request, replyFor(conversation, random, options.replyWords));
  const stopped = cutAtStop(replyText, request.stop ?? []);

  const reasoningPieces = takeWithinBudget(splitTokenPieces(reasoningText), request.reasoning?.budgetTokens ?? Infinity).pieces;
  const turn = spendOutputBudget(reasoningPieces, splitTokenPieces(stopped.text), stopped.stopSequence ? [] : toolCalls, request.maxTokens ?? Infinity);
  if (stopped.stopSequence && turn.stopReason === 'stop') {
    turn.stopReason = 'stop_sequence';
    turn.stopSequence = stopped.stopSequence;
  }

  const reasoning = joinPieces(turn.reasoning);
  if (reasoning) turn.signature = `sim-sig-${hashHex(reasoning)}`;
  if (request.logprobs) turn.logprobs = pieceLogprobs(seedKey, turn.text, request.topLogprobs ?? 0);
  turn.usage = {
    inputTokens: countPromptTokens(request),
    outputTokens: countOutputTokens({ text: joinPieces(turn.text), reasoning, toolCalls: turn.toolCalls }, countExactTokens),
    ...(reasoning ? { reasoningTokens: countExactTokens(reasoning) } : {}),
  };
  return turn;
}

/**
 * A JSON reply when the request asks for one: a sample valid against the schema — the format's,
 * or in `json_object` mode the one its prompt gives (its required properties) — else the prose
 * wrapped in an object.
 */
function formattedReply(request: CanonicalRequest, prose: string): string {
  const format = request.responseFormat;
  if (!format) return prose;
  if (format.type === 'json_schema') return JSON.stringify(sampleJson(format.schema));
  const prompted = schemaInPrompt(request);
  return JSON.stringify(prompted ? sampleJson(prompted, { requiredOnly: true }) : { answer: prose });
}

export function joinPieces(pieces: TokenPiece[]): string {
  return pieces.map((piece) => piece.text).join('');
}

/** What the reply is about: the turn being answered, and what kind it was. */
interface Conversation {
  /** Text of the turn being answered (the user's words, or the tool result): the reply key. */
  lastText: string;
  /** The user's words when the turn is the user's (tools are only called in answer to a user). */
  lastUserText?: string;
  /** The last message is the assistant's own partial reply: the turn continues it. */
  continuesAssistant?: boolean;
  /** The turn brings a tool result, with the name of the tool that produced it. */
  toolResult?: { name: string; content: string };
}

/**
 * The turn to answer is everything after the assistant's last message. System messages in it are
 * instructions, not the turn (Claude Code appends one after the user's message), so they are
 * skipped; a tool result in it makes it a tool-result turn, answered in text (a user text sent
 * along with the result, such as a client's reminder, does not ask for the tool again).
 */
function readConversation(messages: CanonicalMessage[]): Conversation {
  const last = messages[messages.length - 1];
  if (!last) return { lastText: '' };
  if (last.role === 'assistant') return { lastText: contentText(last.content), continuesAssistant: true };
  let userText: string | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.role === 'assistant') break;
    if (message.role === 'tool') {
      const call = messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])).find((c) => c.id === message.toolCallId);
      return { lastText: message.content, toolResult: { name: call?.name ?? 'tool', content: message.content } };
    }
    if (message.role === 'user' && userText === undefined) userText = contentText(message.content);
  }
  if (userText !== undefined) return { lastText: userText, lastUserText: userText };
  // Only instructions since the assistant spoke: answer them, as before.
  return { lastText: last.role === 'system' ? last.content : '' };
}

function contentText(content: ContentPart[]): string {
  return content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join(' ')
    .trim();
}

/**
 * Echo first (so callers can see their input arrived), then deterministic filler. A partial
 * assistant reply is continued instead: the text carries on from it without repeating it.
 */
function replyFor(conversation: Conversation, random: () => number, replyWords: number | undefined): string {
  const body = sentences(random, replyWords ?? randomInt(random, 16, 31));
  if (conversation.continuesAssistant) return ` ${body || 'and so on.'}`;
  let echo = 'Hello.';
  if (conversation.toolResult) echo = `The ${conversation.toolResult.name} tool returned: "${quote(conversation.toolResult.content)}".`;
  else if (conversation.lastText) echo = `You said: "${quote(conversation.lastText)}".`;
  return body ? `${echo} ${body}` : echo;
}

function reasoningFor(conversation: Conversation, toolCalls: ToolCall[], random: () => number): string {
  const subject = conversation.toolResult ? `The ${conversation.toolResult.name} tool answered` : 'The user wrote';
  const plan = toolCalls.length > 0 ? `I should call ${toolCalls.map((call) => call.name).join(' and ')}.` : 'I will answer now.';
  return `${subject} "${quote(conversation.lastText)}". ${sentences(random, randomInt(random, 10, 19))} ${plan}`;
}

/** Generation ends before the earliest stop string, which is not part of the output (as upstream APIs do). */
function cutAtStop(text: string, stop: string[]): { text: string; stopSequence?: string } {
  let cut: { at: number; sequence: string } | undefined;
  for (const sequence of stop) {
    const at = sequence.length > 0 ? text.indexOf(sequence) : -1;
    if (at >= 0 && (!cut || at < cut.at)) cut = { at, sequence };
  }
  return cut ? { text: text.slice(0, cut.at), stopSequence: cut.sequence } : { text };
}

/**
 * Keeps leading pieces while they fit in `budget` tokens. The count is re-checked on the joined
 * text because re-tokenising a prefix can differ from the sum of its pieces; when it does not fit,
 * the longest prefix that does is found by bisection (a count per step, not one per piece dropped:
 * a long reply cut by its budget costs O(n log n), not O(n²)).
 */
function takeWithinBudget(pieces: TokenPiece[], budget: number): { pieces: TokenPiece[]; truncated: boolean } {
  let end = 0;
  let used = 0;
  while (end < pieces.length && used + pieces[end].tokens <= budget) used += pieces[end++].tokens;
  const fits = (length: number) => countExactTokens(joinPieces(pieces.slice(0, length))) <= budget;
  if (end > 0 && !fits(end)) {
    // fits(low) holds (the empty prefix always fits), fits(high) does not.
    let low = 0;
    let high = end;
    while (high - low > 1) {
      const middle = (low + high) >>> 1;
      if (fits(middle)) low = middle;
      else high = middle;
    }
    end = low;
  }
  return { pieces: pieces.slice(0, end), truncated: end < pieces.length };
}

/** Spends `maxTokens` on reasoning, then text, then whole tool calls; running out means 'length'. */
function spendOutputBudget(reasoning: TokenPiece[], text: TokenPiece[], toolCalls: ToolCall[], maxTokens: number): SimulatedTurn {
  const length = (kept: Partial<SimulatedTurn>): SimulatedTurn => ({
    reasoning: [],
    text: [],
    toolCalls: [],
    ...kept,
    stopReason: 'length',
    usage: ZERO_USAGE,
  });
  const keptReasoning = takeWithinBudget(reasoning, maxTokens);
  if (keptReasoning.truncated) return length({ reasoning: keptReasoning.pieces });
  let remaining = maxTokens - countExactTokens(joinPieces(reasoning));
  const keptText = takeWithinBudget(text, remaining);
  if (keptText.truncated) return length({ reasoning, text: keptText.pieces });
  remaining -= countExactTokens(joinPieces(text));
  const toolTokens = countOutputTokens({ text: '', toolCalls }, countExactTokens);
  if (toolTokens > remaining) return length({ reasoning, text });
  return { reasoning, text, toolCalls, stopReason: toolCalls.length > 0 ? 'tool_calls' : 'stop', usage: ZERO_USAGE };
}

/** Placeholder until `simulateTurn` counts the final output. */
const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 };
