import { AccountScoped, AuthenticateKeyRequest, KeysChangedEvent, KeysTouchedEvent, KeyViewRequest } from '../auth/auth.messages';
import type { Principal } from '../auth/principal';
import type { MessageResponse, ProxyKeyRecord, RegeneratedKey, ToggleResponse } from '../proxy-keys/proxy-key.schema';
import type { KeyView } from '../proxy-keys/key-view.schema';
import {
  AccountBudgetRequest,
  AccountLogsRequest,
  AccountSummaryRequest,
  AccountUsageRequest,
  type AccountBudget,
  type LogsPage,
} from '../accounts/account.messages';
import type { UsageSeries, UsageSummary } from '../accounts/account.schema';
import {
  InputItemsRequest,
  SaveStoredResponseRequest,
  StoredItemsRequest,
  StoredResponseRequest,
  type DeletedResponse,
  type InputItemsPage,
  type StoredItems,
  type StoredResponseRecord,
} from '../accounts/stored-responses.messages';
import {
  AppendConversationItemsRequest,
  ConversationItemRequest,
  ConversationItemsRequest,
  ConversationRequest,
  CreateConversationRequest,
  UpdateConversationRequest,
  type ConversationItemsPage,
  type ConversationObject,
  type DeletedConversation,
} from '../accounts/conversations.messages';
import { EmbeddingsRequest, ImageGenerationRequest, ModerationsRequest, type MediaMessage } from '../inference/media.messages';
import { ImageEditRequest } from '../inference/image-edit.messages';
import { TranscriptionRequest, TranslationRequest, type TranscriptionFrame } from '../inference/audio.messages';
import { SpeechRequest, type SpeechFrame } from '../inference/speech.messages';
import { CancelInferenceEvent, DecisionRequest, TextGenerationRequest, type HeartbeatFrame, type TextFrame } from '../inference/text-generation.messages';
import type { ModelEntry } from '../inference/model-list.schema';
import { CreateProxyKeyCommand, ProxyKeyCommand, UpdateProxyKeyCommand } from '../proxy-keys/proxy-key.commands';
import { familyAliveSubject, healthSubject, QueueGroups, routerAliveSubject, RouterFamily, ServiceName, Subjects } from '../subjects';

/**
 * How a subject is used:
 * - `request`: one request, one reply (or an error reply);
 * - `stream`: one request, any number of reply frames, then the end (or an error reply);
 * - `event`: a message nobody answers.
 */
export type RpcKind = 'request' | 'stream' | 'event';

export type Dto<T = object> = abstract new (...args: never[]) => T;

/**
 * One NATS subject's contract: its wire name, how it is used, the class-validator DTO its payload
 * must satisfy (the one source of the payload's rules: the transport validates with the JSON schema
 * generated from it), the queue group its handlers share, the router family that serves it, and the
 * type of its replies (a phantom: never set, read by the client's types only).
 */
export interface RpcContract<Request = object, Reply = unknown, Kind extends RpcKind = RpcKind> {
  readonly subject: string;
  readonly kind: Kind;
  readonly request?: Dto<Request>;
  /** Handlers in the service's queue group share the messages; `false`: every subscriber gets each one. */
  readonly queue?: string | false;
  /**
   * Served only by the router replicas whose `ROUTER_FAMILIES` include it. Without a family, every
   * replica of the service that handles the subject serves it (the model list, cancels, health).
   */
  readonly family?: RouterFamily;
  readonly reply?: Reply;
}

export type RequestOf<C> = C extends RpcContract<infer Request> ? Request : never;
export type ReplyOf<C> = C extends RpcContract<unknown, infer Reply> ? Reply : never;
export type RequestContract = RpcContract<any, any, 'request'>;
export type StreamContract = RpcContract<any, any, 'stream'>;
export type EventContract = RpcContract<any, never, 'event'>;

const request = <Request extends object, Reply>(subject: string, dto?: Dto<Request>, queue?: string | false) =>
  ({ subject, kind: 'request', request: dto, queue }) as RpcContract<Request, Reply, 'request'>;
const stream = <Request extends object, Reply>(subject: string, dto: Dto<Request>) =>
  ({ subject, kind: 'stream', request: dto }) as RpcContract<Request, Reply, 'stream'>;
const event = <Event extends object>(subject: string, dto: Dto<Event>, queue?: string | false) =>
  ({ subject, kind: 'event', request: dto, queue }) as RpcContract<Event, never, 'event'>;

/** The contract, served by the routers of `family` only. */
const ofFamily = <C extends RpcContract, F extends RouterFamily>(family: F, contract: C) => ({ ...contract, family }) as C & { readonly family: F };

/** What a router sends on a stream subject besides its answer: proofs of life. */
type WithHeartbeats<Frame> = Frame | HeartbeatFrame;

/**
 * Every NATS subject with its contract. Call sites name a subject only through this table: the
 * client takes the request's type and the reply's from it, and the server validates each payload
 * with the schema generated from its DTO.
 */
export const Rpc = {
  keysAuthenticate: request<AuthenticateKeyRequest, Principal | null>(Subjects.keysAuthenticate, AuthenticateKeyRequest),
  masterKeyRegenerate: request<AccountScoped, RegeneratedKey>(Subjects.masterKeyRegenerate, AccountScoped),
  keyView: request<KeyViewRequest, KeyView>(Subjects.keyView, KeyViewRequest),
  /** Every edge replica drops the keys from its cache: no queue group. */
  keysChanged: event(Subjects.keysChanged, KeysChangedEvent, false),
  keysTouched: event(Subjects.keysTouched, KeysTouchedEvent),
  proxyKeyCreate: request<CreateProxyKeyCommand, ProxyKeyRecord>(Subjects.proxyKeyCreate, CreateProxyKeyCommand),
  proxyKeyList: request<AccountScoped, ProxyKeyRecord[]>(Subjects.proxyKeyList, AccountScoped),
  proxyKeyLookup: request<ProxyKeyCommand, ProxyKeyRecord>(Subjects.proxyKeyLookup, ProxyKeyCommand),
  proxyKeyUpdate: request<UpdateProxyKeyCommand, MessageResponse>(Subjects.proxyKeyUpdate, UpdateProxyKeyCommand),
  proxyKeyToggle: request<ProxyKeyCommand, ToggleResponse>(Subjects.proxyKeyToggle, ProxyKeyCommand),
  proxyKeyRemove: request<ProxyKeyCommand, MessageResponse>(Subjects.proxyKeyRemove, ProxyKeyCommand),
  proxyKeyRemoveAll: request<AccountScoped, MessageResponse>(Subjects.proxyKeyRemoveAll, AccountScoped),
  accountSummary: request<AccountSummaryRequest, UsageSummary>(Subjects.accountSummary, AccountSummaryRequest),
  accountLogs: request<AccountLogsRequest, LogsPage>(Subjects.accountLogs, AccountLogsRequest),
  accountUsage: request<AccountUsageRequest, UsageSeries>(Subjects.accountUsage, AccountUsageRequest),
  accountBudget: request<AccountBudgetRequest, AccountBudget>(Subjects.accountBudget, AccountBudgetRequest),
  responsesSave: request<SaveStoredResponseRequest, { saved: true }>(Subjects.responsesSave, SaveStoredResponseRequest),
  responsesGet: request<StoredResponseRequest, StoredResponseRecord>(Subjects.responsesGet, StoredResponseRequest),
  responsesDelete: request<StoredResponseRequest, DeletedResponse>(Subjects.responsesDelete, StoredResponseRequest),
  responsesInputItems: request<InputItemsRequest, InputItemsPage>(Subjects.responsesInputItems, InputItemsRequest),
  responsesItems: request<StoredItemsRequest, StoredItems>(Subjects.responsesItems, StoredItemsRequest),
  conversationsCreate: request<CreateConversationRequest, ConversationObject>(Subjects.conversationsCreate, CreateConversationRequest),
  conversationsGet: request<ConversationRequest, ConversationObject>(Subjects.conversationsGet, ConversationRequest),
  conversationsUpdate: request<UpdateConversationRequest, ConversationObject>(Subjects.conversationsUpdate, UpdateConversationRequest),
  conversationsDelete: request<ConversationRequest, DeletedConversation>(Subjects.conversationsDelete, ConversationRequest),
  /** The items added, as stored (an id the conversation already holds is kept once). */
  conversationsAppend: request<AppendConversationItemsRequest, ConversationItemsPage>(Subjects.conversationsAppend, AppendConversationItemsRequest),
  conversationsItems: request<ConversationItemsRequest, ConversationItemsPage>(Subjects.conversationsItems, ConversationItemsRequest),
  conversationsItem: request<ConversationItemRequest, Record<string, unknown>>(Subjects.conversationsItem, ConversationItemRequest),
  /** The conversation, as OpenAI answers the item's deletion. */
  conversationsDeleteItem: request<ConversationItemRequest, ConversationObject>(Subjects.conversationsDeleteItem, ConversationItemRequest),
  /** The hot path: `TextFrame`s (heartbeats among them), then the end. */
  inferenceText: ofFamily('text', stream<TextGenerationRequest, TextFrame>(Subjects.inferenceText, TextGenerationRequest)),
  /** Every router answers it, whatever its families: `/v1/models` works while any router runs. */
  inferenceModels: request<object, ModelEntry[]>(Subjects.inferenceModels),
  /** One `json` frame, after heartbeats while it runs when asked for them. */
  inferenceDecide: ofFamily('decisions', stream<DecisionRequest, WithHeartbeats<TextFrame>>(Subjects.inferenceDecide, DecisionRequest)),
  /** Broadcast to every router, whatever its families (the edge cancels media and decisions too): the one serving the request stops. */
  inferenceCancel: event(Subjects.inferenceCancel, CancelInferenceEvent, false),
  inferenceEmbeddings: ofFamily('embeddings', stream<EmbeddingsRequest, MediaMessage>(Subjects.inferenceEmbeddings, EmbeddingsRequest)),
  inferenceModerations: ofFamily('moderations', stream<ModerationsRequest, MediaMessage>(Subjects.inferenceModerations, ModerationsRequest)),
  inferenceImages: ofFamily('images', stream<ImageGenerationRequest, MediaMessage>(Subjects.inferenceImages, ImageGenerationRequest)),
  /** Image edits: the staged images' references in, an `images` reply out. */
  inferenceImageEdits: ofFamily('images', stream<ImageEditRequest, MediaMessage>(Subjects.inferenceImageEdits, ImageEditRequest)),
  /** The audio as it is made (`start`, `audio` chunks, `done`), or one `json` error; heartbeats while it runs. */
  inferenceSpeech: ofFamily('audio', stream<SpeechRequest, WithHeartbeats<SpeechFrame>>(Subjects.inferenceSpeech, SpeechRequest)),
  /** Transcriptions and translations: one reply of `MediaReplyPart`s (a staged upload's reference in, text or events out). */
  inferenceTranscriptions: ofFamily('audio', stream<TranscriptionRequest, MediaMessage>(Subjects.inferenceTranscriptions, TranscriptionRequest)),
  inferenceTranslations: ofFamily('audio', stream<TranslationRequest, MediaMessage>(Subjects.inferenceTranslations, TranslationRequest)),
  /** A transcription with `stream: true`: `start`, each event as the upstream sends it, or one `json` error; heartbeats while it runs. */
  inferenceTranscriptionStream: ofFamily(
    'audio',
    stream<TranscriptionRequest, WithHeartbeats<TranscriptionFrame>>(Subjects.inferenceTranscriptionStream, TranscriptionRequest),
  ),
  /** One `json` `TextFrame`: the input tokens of a text-generation body; a text router's work (it parses text formats). */
  inferenceCountTokens: ofFamily('text', request<TextGenerationRequest, TextFrame>(Subjects.inferenceCountTokens, TextGenerationRequest)),
  /**
   * Liveness probe of one replica, or of any router (queue group; what edges of the release before
   * families probe); answered by nobody (see `Subjects.inferenceAlive`): the NATS server's "no
   * responders" is the answer.
   */
  inferenceAlive: (router?: string) =>
    request<object, never>(router ? routerAliveSubject(router) : Subjects.inferenceAlive, undefined, router ? false : QueueGroups['inference-router']),
  /** Liveness probe of the routers serving `family` (queue group), answered by nobody like `inferenceAlive`. */
  inferenceFamilyAlive: (family: RouterFamily) => request<object, never>(familyAliveSubject(family), undefined, QueueGroups['inference-router']),
  /** A service's readiness over NATS: `health.<service>`. */
  health: (service: ServiceName) => request<object, { ready: boolean; checks: Record<string, 'up' | 'down'> }>(healthSubject(service)),
} as const;

/** Every contract of the table (the parametrised ones excluded). */
export const RPC_CONTRACTS: readonly RpcContract[] = (Object.values(Rpc) as unknown[]).filter((entry): entry is RpcContract => typeof entry !== 'function');

const familiesBySubject = new Map(RPC_CONTRACTS.map((contract) => [contract.subject, contract.family]));

/** The router family a subject belongs to; undefined for a subject of no family (or not in the table). */
export const familyOfSubject = (subject: string): RouterFamily | undefined => familiesBySubject.get(subject);
