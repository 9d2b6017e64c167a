/**
 * Test helper: zod schemas of the responses the origin API's official client
 * (`@compose-market/sdk`, `typescript/src/types/index.ts`) reads, written from its published types.
 * They check the fields the client's types declare (required ones present, with their types);
 * fields the client does not declare are allowed. `verification` takes the gateway's own name
 * `service_key` besides the client's `compose_key` only when compat is off.
 */
import { z } from "zod";

const str = z.string();
const num = z.number();
const amount = z.string().regex(/^\d+$/, "an atomic amount as a decimal string");
const modality = z.enum(["text", "image", "audio", "video", "embedding", "realtime"]);

const pricingUnit = z.object({
  unitKey: str,
  unit: str.optional(),
  header: str.optional(),
  entries: z.record(str, num),
  valueKeys: z.array(str),
  default: z.boolean().optional(),
});

const operation = z.object({
  modality,
  operation: str,
  sourceTypes: z.array(str),
  input: z.array(str),
  output: z.array(str),
  pricingUnits: z.array(pricingUnit),
  streamable: z.boolean(),
});

/** `Model`: one catalog card. */
export const model = z.object({
  modelId: str,
  name: str.nullable(),
  provider: str,
  type: z.union([str, z.array(str)]).nullable(),
  description: str.nullable(),
  operations: z.array(operation).optional(),
});

export const modelList = z.object({ object: z.literal("list"), data: z.array(model) });
export const modelSearch = modelList.extend({ total: num, next_cursor: str.nullable() });

export const modelParams = z.object({
  modelId: str,
  type: modality.nullable(),
  provider: str.nullable(),
  params: z.record(
    str,
    z.object({
      type: z.enum(["string", "integer", "number", "boolean", "array", "object"]),
      required: z.boolean(),
      default: z.union([str, num, z.boolean()]).optional(),
      options: z.array(z.union([str, num])).optional(),
      minimum: num.optional(),
      maximum: num.optional(),
      description: str.optional(),
    }),
  ),
  defaults: z.record(str, z.unknown()),
});

const operationEntry = z.object({ operation: str, modelCount: num, sourceTypes: z.array(str), pricingUnits: z.array(pricingUnit) });
export const modalityList = z.object({
  object: z.literal("list"),
  data: z.array(z.object({ modality, operations: z.array(operationEntry), modelCount: num, pricingUnits: z.array(pricingUnit) })),
});

export const pricing = z.object({ models: z.array(z.object({ modelId: str, provider: str, pricing: z.unknown() })), version: str });

const meterLine = z.object({ key: str, unit: str, quantity: num, unitPriceUsd: num });
const quotedLine = meterLine.extend({ amountWei: amount });
export const modelMeterQuote = z.object({
  subject: str,
  lineItems: z.array(quotedLine),
  providerAmountWei: amount,
  platformFeeWei: amount,
  finalAmountWei: amount,
  modelId: str,
  provider: str,
  known: z.boolean(),
  meter: z.object({ subject: str, lineItems: z.array(meterLine) }),
});

const intentStatus = z.enum(["authorized", "settling", "settled", "aborted", "failed"]);
export const prepare = z.object({ paymentIntentId: str, maxAmountWei: amount, status: intentStatus });
export const settle = z.object({
  paymentIntentId: str,
  maxAmountWei: amount,
  finalAmountWei: amount,
  status: intentStatus,
  lineItems: z.array(quotedLine).optional(),
  providerAmountWei: amount.optional(),
  platformFeeWei: amount.optional(),
  txHash: str.optional(),
});
export const abort = z.object({ paymentIntentId: str, status: intentStatus.optional(), reason: str.optional() });

const keyPurpose = z.enum(["session", "api"]);
export const keyCreate = z.object({
  keyId: str,
  token: str,
  purpose: keyPurpose,
  budgetLimit: amount,
  budgetUsed: amount,
  budgetRemaining: amount,
  createdAt: num,
  expiresAt: num,
  chainId: num,
  name: str.optional(),
});
export const keyRecord = z.object({
  keyId: str,
  purpose: keyPurpose,
  budgetLimit: amount,
  budgetUsed: amount,
  budgetReserved: amount.optional(),
  budgetRemaining: amount,
  createdAt: num,
  expiresAt: num,
  revokedAt: num.optional(),
  lastUsedAt: num.optional(),
  name: str.optional(),
  chainId: num.optional(),
});
export const keyList = z.object({ keys: z.array(keyRecord) });

export const activeSession = z.object({
  hasSession: z.boolean(),
  reason: str.optional(),
  keyId: str.optional(),
  budgetLimit: amount.optional(),
  budgetUsed: amount.optional(),
  budgetLocked: amount.optional(),
  budgetRemaining: amount.optional(),
  expiresAt: num.optional(),
  chainId: num.optional(),
  name: str.optional(),
  status: z
    .object({
      isActive: z.boolean(),
      isExpired: z.boolean(),
      expiresInSeconds: num,
      budgetPercentRemaining: num,
      warnings: z.object({ budgetDepleted: z.boolean(), budgetLow: z.boolean(), expiringSoon: z.boolean(), expired: z.boolean() }),
    })
    .optional(),
});

const feedbackTarget = z.object({ type: z.enum(["endpoint", "x402", "model", "agent", "workflow"]), id: str });
const categories = ["general", "bug", "latency", "quality", "pricing", "settlement", "model_capability", "safety", "docs", "integration"] as const;

/** The feedback schemas; `compat` decides the name of a key-verified review. */
export function feedbackSchemas(compat: boolean) {
  const kinds = compat ? (["anonymous", "wallet_header", "compose_key"] as const) : (["anonymous", "wallet_header", "service_key"] as const);
  const verification = z.enum(kinds);
  const record = z.object({
    id: str,
    target: feedbackTarget,
    category: z.enum(categories),
    rating: num.optional(),
    message: str.optional(),
    labels: z.array(str),
    context: z.record(str, z.unknown()),
    metadata: z.record(str, z.unknown()),
    verification,
    createdAt: num,
  });
  return {
    submit: z.object({ feedbackId: str, target: feedbackTarget, verification, createdAt: num }),
    list: z.object({ object: z.literal("list"), data: z.array(record) }),
    summary: z.object({
      target: feedbackTarget,
      count: num,
      ratingCount: num,
      ratingAverage: num.nullable(),
      ratings: z.object({ 1: num, 2: num, 3: num, 4: num, 5: num }),
      categories: z.object(Object.fromEntries(categories.map((c) => [c, num]))),
      verification: z.object(Object.fromEntries(kinds.map((k) => [k, num]))),
      recent: z.array(record),
    }),
  };
}

const dispenser = z.object({
  chainId: num,
  chainName: str,
  totalClaims: num,
  maxClaims: num,
  remainingClaims: num,
  dispenserBalance: str,
  dispenserBalanceFormatted: str,
  isPaused: z.boolean(),
  dispenserAddress: str,
  usdcAddress: str,
  isConfigured: z.boolean(),
});
export const dispenserStatus = z.object({ dispensers: z.array(dispenser), claimAmount: num, claimAmountFormatted: str, maxClaims: num });
export const dispenserByChain = z.object({ available: z.boolean(), reason: str.optional(), status: dispenser.optional() });
export const dispenserCheck = z.object({ address: str, hasClaimed: z.boolean() });

export const settlementStatus = z.object({ hasActiveBudget: z.boolean(), message: str.optional(), budget: z.record(str, z.unknown()).optional() });

export const directoryAgent = z.object({
  schemaVersion: str,
  name: str,
  description: str,
  skills: z.array(str),
  x402Support: z.boolean(),
  dnaHash: str,
  walletAddress: str,
  chain: num,
  model: str,
  licensePrice: str,
  licenses: num,
  cloneable: z.boolean(),
  protocols: z.array(z.object({ name: str, version: str })),
  createdAt: str,
});
export const directoryAgentList = z.object({ agents: z.array(directoryAgent), total: num });
