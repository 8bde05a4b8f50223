import type { TSchema } from 'typebox';
import { LogEntries, LogEntry, UsageSeries, UsageSummary } from '../accounts/account.schema';
import { Decision, DecisionAnswer, DecisionModel, DecisionQuestion, DecisionRequestBody } from '../inference/decision.schema';
import { EmbeddingList, ImageGenerationResult, ModerationResult } from '../inference/media.schema';
import { ModelEntry, ModelList } from '../inference/model-list.schema';
import { TranscriptionResult } from '../inference/audio.schema';
import { MessagesTokenCount, ResponsesInputTokens } from '../inference/token-count.schema';
import { KeyBudget, KeyView } from '../proxy-keys/key-view.schema';
import { MessageResponse, ProxyKeyRecord, ProxyKeyRecords, RegeneratedKey, ToggleResponse, ValidateProxyKeyResponse } from '../proxy-keys/proxy-key.schema';
import { VideoGeneration, VideoHeartbeat, VideoProgress } from '../video/video-stream.schema';

/**
 * The API's bodies beyond the client formats', by the name `/v1/openapi.json` gives each under
 * `components.schemas`: the same objects the producing code takes its types from (and, for the
 * decision request, the router validates with).
 */
export const API_SCHEMAS = {
  DecisionRequest: DecisionRequestBody,
  DecisionQuestion,
  Decision,
  DecisionAnswer,
  DecisionModel,
  EmbeddingList,
  ModerationResult,
  ImageGenerationResult,
  Model: ModelEntry,
  ModelList,
  MessagesTokenCount,
  ResponsesInputTokens,
  UsageSummary,
  LogEntry,
  LogEntries,
  UsageSeries,
  ProxyKey: ProxyKeyRecord,
  ProxyKeys: ProxyKeyRecords,
  MessageResponse,
  ToggleResponse,
  ValidateProxyKeyResponse,
  RegeneratedKey,
  KeyView,
  KeyBudget,
  VideoHeartbeat,
  VideoProgress,
  VideoGeneration,
  TranscriptionResult,
} satisfies Record<string, TSchema>;

export type ApiSchemaName = keyof typeof API_SCHEMAS;
