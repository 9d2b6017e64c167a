/**
 * @tollgate/client — the typed fetch client of a Tollgate gateway: a method per route grouped by
 * resource, an error class per status, retries with backoff honouring `Retry-After`, an
 * idempotency key kept across retries of a prepare, timeouts and AbortSignal on every call,
 * budget and receipt headers in `.withResponse()`, chat completions (streamed chunks as an
 * AsyncIterable), the video status stream as an AsyncIterable, and Sign-In with Ethereum wallet sessions. Needs only `fetch`: browsers, edge runtimes and Node 20+.
 */
export { createTollgateClient, type OpenAPIDocument, type RawRequest, type TollgateClient } from "./client.js";
export { APIPromise } from "./api-promise.js";
export type { ResponseMeta, WithMeta } from "./http/meta.js";
export type { BearerPolicy, HttpMethod } from "./http/request.js";
export type { QueryValue } from "./http/encoding.js";
export { isRetryableAnswer, retryAfterMs, retryDelayMs, INITIAL_RETRY_DELAY_MS, MAX_RETRY_AFTER_MS, MAX_RETRY_DELAY_MS } from "./http/retry.js";
export { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS } from "./options.js";
export type { ClientOptions, Credentials, FetchLike, PaidRequestOptions, PrepareOptions, RequestOptions } from "./options.js";
export {
  AuthenticationError,
  BadGatewayError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  ERROR_CLASSES,
  GatewayTimeoutError,
  InternalServerError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  PaymentRequiredError,
  PermissionDeniedError,
  RateLimitError,
  RequestTimeoutError,
  ServiceUnavailableError,
  TimeoutError,
  TollgateError,
  UnprocessableEntityError,
  UnsupportedMediaTypeError,
  UserAbortError,
  type TollgateErrorInit,
} from "./errors.js";
export { VideoStream, type VideoErrorEvent, type VideoJobStatus, type VideoStatusEvent, type VideoStreamEvent } from "./sse.js";
export { ChatCompletionStream } from "./chat-stream.js";
export type { Amount, Budget, LineItem, OutputCap, OutputCapReason, Paged, RateLimitInfo, Receipt, SettlementState } from "./types/common.js";
export type { ChatCompletionsResource, ChatResource } from "./resources/chat.js";
export type {
  ChatCompletion,
  ChatCompletionAssistantMessageParam,
  ChatCompletionChoice,
  ChatCompletionChunk,
  ChatCompletionChunkChoice,
  ChatCompletionChunkDelta,
  ChatCompletionChunkToolCall,
  ChatCompletionContentPart,
  ChatCompletionContentPartFile,
  ChatCompletionContentPartImage,
  ChatCompletionContentPartInputAudio,
  ChatCompletionContentPartText,
  ChatCompletionCreateParams,
  ChatCompletionCreateParamsBase,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionDeveloperMessageParam,
  ChatCompletionFinishReason,
  ChatCompletionFunctionMessageParam,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionResponseFormat,
  ChatCompletionStreamOptions,
  ChatCompletionSystemMessageParam,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption,
  ChatCompletionToolMessageParam,
  ChatCompletionUserMessageParam,
  CompletionUsage,
} from "./types/chat.js";
export { buildSiweMessage, toChecksumAddress, type SiweMessageFields } from "./siwe.js";
export { DEFAULT_SIGN_IN_STATEMENT, type AuthNonce, type AuthResource, type SignedIn, type SignedOut, type SignInParams, type SignMessage, type WalletSession } from "./resources/auth.js";
export type { PaymentRequired, PaymentRequirements, PaymentResponse } from "./types/x402.js";
export type {
  ActiveSession,
  BudgetPeriod,
  CreateKeyParams,
  CreatedServiceKey,
  DirectCharge,
  KeyEvent,
  KeyEventList,
  KeyList,
  KeyRateLimit,
  KeyStatus,
  KeysResource,
  ModelBudget,
  PageParams,
  RevokedKey,
  RotatedServiceKey,
  RotateKeyParams,
  ServiceKey,
  UpdateKeyParams,
} from "./resources/keys.js";
export type {
  AbortedIntent,
  IntentList,
  IntentListItem,
  LineMeter,
  ListIntentsParams,
  MediaEvidence,
  Meter,
  MeterResult,
  PaymentsResource,
  PreparedIntent,
  PrepareParams,
  SettledIntent,
  SettleParams,
  Usage,
  UsageMeter,
  MeteredLineItem,
  QuoteMeter,
} from "./resources/payments.js";
export { randomIdempotencyKey } from "./resources/payments.js";
export type {
  AudioResource,
  EmbeddingParams,
  EmbeddingsResource,
  EmbeddingsResponse,
  FileInput,
  ImageEditParams,
  ImageGenerateParams,
  ImagesResource,
  ImagesResponse,
  ModelSelection,
  SpeechAudio,
  SpeechParams,
  Transcription,
  TranscriptionParams,
} from "./resources/media.js";
export type { VideoCreateParams, VideoJob, VideoStatus, VideoStreamOptions, VideosResource } from "./resources/videos.js";
export type {
  CatalogProxyResponse,
  CatalogResource,
  Modality,
  ModalityCatalogEntry,
  ModalityList,
  ModelCard,
  ModelFilters,
  ModelList,
  ModelOperation,
  ModelParams,
  ModelsResource,
  OperationCatalogEntry,
  ParamSpec,
  PriceLine,
  PricingTable,
  PricingUnit,
} from "./resources/models.js";
export type { FeedbackCategory, FeedbackCreated, FeedbackFields, FeedbackItem, FeedbackList, FeedbackParams, FeedbackResource, FeedbackSummary, FeedbackTarget, FeedbackVerification } from "./resources/feedback.js";
export type { DispenserChainAvailability, DispenserChainStatus, DispenserCheck, DispenserClaim, DispenserResource, DispenserStatus } from "./resources/dispenser.js";
export type { SettlementBatchResult, SettlementGroupResult, SettlementResource, SettlementStatus } from "./resources/settlement.js";
export type { UsageDay, UsageModel, UsageParams, UsageResource, WalletUsage } from "./resources/usage.js";
export type { AgentCard, AgentList, AgentsResource, DirectoryAgent, DirectoryPage, DirectoryResource, DirectorySearchParams, RankedAgentCard } from "./resources/agents.js";
