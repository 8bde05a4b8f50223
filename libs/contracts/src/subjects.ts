/**
 * NATS subjects and queue groups. These are persisted wire names: once shipped they change only
 * with a migration plan (old and new subjects served side by side until every replica is updated).
 */
export const Subjects = {
  keysAuthenticate: 'keys.authenticate',
  keysChanged: 'keys.changed',
  keysTouched: 'keys.touched',
  masterKeyRegenerate: 'keys.master.regenerate',
  /** The calling key and its budgets (`GET /v1/key`, and the budgets of the validate answer). */
  keyView: 'keys.view',
  proxyKeyCreate: 'keys.proxy.create',
  proxyKeyList: 'keys.proxy.list',
  proxyKeyLookup: 'keys.proxy.lookup',
  proxyKeyUpdate: 'keys.proxy.update',
  proxyKeyToggle: 'keys.proxy.toggle',
  proxyKeyRemove: 'keys.proxy.remove',
  proxyKeyRemoveAll: 'keys.proxy.remove-all',
  accountSummary: 'accounts.summary',
  accountLogs: 'accounts.logs',
  /** Usage series from the 15-minute rollups (`GET /v1/user/usage`). */
  accountUsage: 'accounts.usage',
  /** Credits and a proxy key's spend, to prime the edge's Redis budget when it has none. */
  accountBudget: 'accounts.budget',
  /** Stored Responses-API responses (account-service keeps them; the router writes and resolves, the edge reads). */
  responsesSave: 'responses.save',
  responsesGet: 'responses.get',
  responsesDelete: 'responses.delete',
  responsesInputItems: 'responses.input-items',
  responsesItems: 'responses.items',
  /** Conversations-API conversations (account-service keeps them; the edge manages them, the router reads and appends). */
  conversationsCreate: 'conversations.create',
  conversationsGet: 'conversations.get',
  conversationsUpdate: 'conversations.update',
  conversationsDelete: 'conversations.delete',
  conversationsAppend: 'conversations.append',
  conversationsItems: 'conversations.items',
  conversationsItem: 'conversations.item',
  conversationsDeleteItem: 'conversations.delete-item',
  inferenceText: 'inference.text',
  inferenceModels: 'inference.models',
  inferenceDecide: 'inference.decide',
  /** Broadcast: the client went away; the router serving the request aborts its upstream call. */
  inferenceCancel: 'inference.cancel',
  /**
   * Liveness probes, answered by nobody: every router subscribes `inference.alive.<router id>` (its
   * own), `inference.alive.family.<family>` for each family it serves and `inference.alive` (queue
   * group `inference-router`), so a probe the NATS server answers "no responders" means that router
   * (or every router of the family, or every router) is gone, whatever its load.
   */
  inferenceAlive: 'inference.alive',
  inferenceEmbeddings: 'inference.embeddings',
  inferenceModerations: 'inference.moderations',
  inferenceImages: 'inference.images',
  inferenceImageEdits: 'inference.image-edits',
  inferenceTranscriptions: 'inference.transcriptions',
  inferenceTranslations: 'inference.translations',
  /** A transcription with `stream: true`: its events in `TranscriptionFrame`s as the upstream sends them. */
  inferenceTranscriptionStream: 'inference.transcription-stream',
  /** Input tokens of a text-generation body (`/messages/count_tokens`, `/responses/input_tokens`): one `json` TextFrame. */
  inferenceCountTokens: 'inference.count-tokens',
  /** `POST /v1/audio/speech`: the audio in `SpeechFrame`s as it is made. */
  inferenceSpeech: 'inference.speech',
} as const;

export type Subject = (typeof Subjects)[keyof typeof Subjects];

/** The subject one router replica's liveness is probed on (`inference.alive` asks any replica). */
export const routerAliveSubject = (router: string): string => `${Subjects.inferenceAlive}.${router}`;

/**
 * The endpoint families a router replica may serve (`ROUTER_FAMILIES`): each is a set of subjects
 * of the `Rpc` table (its entries' `family`), so each can run, scale and fail on its own pods.
 */
export const RouterFamilies = ['text', 'embeddings', 'moderations', 'images', 'decisions', 'audio'] as const;
export type RouterFamily = (typeof RouterFamilies)[number];

/** Probed when no replica has named itself yet: is any router of the family still connected? */
export const familyAliveSubject = (family: RouterFamily): string => `${Subjects.inferenceAlive}.family.${family}`;

/** Each service answers `health.<service>` so the edge's readiness can prove the hop works. */
export const healthSubject = (service: ServiceName): string => `health.${service}`;

export const ServiceNames = ['edge-gateway', 'inference-router', 'key-service', 'account-service', 'metering-service', 'video-worker'] as const;
export type ServiceName = (typeof ServiceNames)[number];

/** Queue groups spread requests over the replicas of one service. */
export const QueueGroups: Record<Exclude<ServiceName, 'edge-gateway'>, string> = {
  'inference-router': 'inference-router',
  'key-service': 'key-service',
  'account-service': 'account-service',
  'metering-service': 'metering-service',
  'video-worker': 'video-worker',
};
