export type {
  ChargeDirectResult,
  ChargeRecord,
  ChargeStatus,
  ChargeStore,
  FinishResult,
  IntentRecord,
  IntentStatus,
  KeyCursor,
  KeyGuardReason,
  KeyPurpose,
  KeyRecord,
  KeyStore,
  LedgerStore,
  NewIntent,
  ReserveResult,
  Store,
} from "./types.js";
export { createMemoryStore } from "./memory.js";
