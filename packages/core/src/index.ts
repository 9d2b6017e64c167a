/**
 * @tollgate/core — the metered AI gateway as a library: `createGateway(options)` returns a
 * gateway whose `handle` serves the plain request shape and whose `fetch` serves Web Requests.
 */
export { createGateway, gatewayRoutes } from "./gateway.js";
export type { Gateway } from "./gateway-types.js";
export type { GatewayServices } from "./services.js";
export type { GatewayContext } from "./context.js";
export { GatewayOptionsError, gatewayOptionsSchema, resolveOptions, type GatewayOptions } from "./options.js";
export { bodyTooLarge, ERROR_TABLE, GatewayError, invalidRequest, toErrorEnvelope, type ErrorCode, type ErrorEnvelope, type GatewayErrorOptions } from "./errors.js";
export { createManualClock, systemClock, type Clock, type ManualClock } from "./clock.js";
export { createSequentialIds, randomIds, type IdGenerator, type IdPrefix } from "./ids.js";
export * from "./money.js";
export type { GatewayRequest, GatewayRequestBody, GatewayResponse, GatewayResponseBody, SseFrame } from "./http/types.js";
export { defineRoute, type AnyRoute, type RouteContext, type RouteDefinition, type RouteMethod } from "./http/route.js";
export { createRouter, type Router, type RouteMatch } from "./http/router.js";
export { json, bytes, empty, stringifyJson } from "./http/respond.js";
export { fallbackResponse } from "./http/handle.js";
export { SSE_CACHE_CONTROL, sseFrame, sseComment, sseResponse } from "./http/sse.js";
export { fromWebRequest, relativeToBase, toWebResponse, type FromWebRequestOptions, type ToWebResponseOptions } from "./http/fetch.js";
export { API_VERSION, buildOpenApiDocument, openApiRoute, type OpenApiDocument, type OpenApiOptions } from "./http/openapi.js";
export type { RouteCredential, RouteSecurity } from "./http/route.js";
export { createFetchHttpClient, releasingIterable, type HttpClient, type HttpClientRequest, type HttpClientResponse } from "./http/client.js";
export { EXPOSED_HEADERS, type CorsOptions } from "./http/cors.js";
export {
  ALL_OPERATIONS,
  MODALITIES,
  OPERATIONS,
  PRICE_UNITS,
  catalogSchema,
  formatIssues,
  modelCardSchema,
  type Modality,
  type ModelCard,
  type ParamSpec,
  type PriceLine,
  type PriceUnit,
} from "./catalog/card.js";
export { createCatalog, DEFAULT_PROVIDER_PRIORITY, type Catalog, type CatalogOptions, type CatalogPage, type CatalogSearch } from "./catalog/catalog.js";
export { NATIVE_CATALOG, NATIVE_CATALOG_VERSION } from "./catalog/generated/native-catalog.js";
export type { ModelsServiceOptions } from "./catalog/models-service.js";
export * from "./store/index.js";
export { consoleLogger, type GatewayLogger, type LogFn, type LogLevel } from "./observability/logger.js";
export { noopTelemetry, UNMETERED, type BudgetRefusal, type PaymentKind, type RequestTrace, type SettlementBatchOutcome, type Telemetry } from "./observability/telemetry.js";
export type { CheckResult, ReadinessReport } from "./observability/health.js";
export { GATEWAY_VERSION } from "./observability/routes.js";
export {
  createUsageService,
  MAX_USAGE_DAYS,
  type UsageDayView,
  type UsageModelView,
  type UsageQuery,
  type UsageService,
  type UsageView,
} from "./usage/service.js";
export * from "./chain/index.js";
export { formatUsdc } from "./dispenser/format.js";
export { EXPIRY_SLACK_MS, type FundingChange, type FundingGuard, type WalletFunding } from "./settlement/funding.js";
export * from "./providers/index.js";
export { BUDGET_PERIODS, rolled, windowEnd, windowLapsed, windowStart, windowStarts } from "./keys/period.js";
export { countOutput, countPrompt, promptBound, tokenCounter, IMAGE_PART_TOKENS, type PromptParts, type TokenCounter } from "./metering/tokens.js";
export { affordableCap, cardMaxOutput, DEFAULT_MAX_OUTPUT_TOKENS, priceChat, quoteChat, type CapReason, type ChatQuote, type ChatQuoteInput } from "./chat/quote.js";
export { createX402Service, DEFAULT_MAX_TIMEOUT_SECONDS, type X402Service, type VerifiedPayment, type PaymentRefusal, type PriceInput } from "./x402/service.js";
export type { PaymentPayload, PaymentRequiredBody, PaymentRequirements, SettleResponse } from "./x402/types.js";
export { PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, PAYMENT_SIGNATURE_HEADER, X402_VERSION } from "./x402/types.js";
export type { Facilitator } from "./x402/facilitator.js";
export { createLocalFacilitator, type LocalFacilitatorOptions } from "./x402/local-facilitator.js";
export { createHttpFacilitator, type HttpFacilitatorOptions } from "./x402/http-facilitator.js";
export { encodeHeader as encodeX402Header, decodeHeader as decodeX402Header } from "./x402/codec.js";
