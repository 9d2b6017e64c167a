import type { Catalog } from "./catalog/catalog.js";
import type { ModelsServiceOptions } from "./catalog/models-service.js";
import type { KeyService } from "./keys/service.js";
import type { KeyGovernance } from "./keys/governance.js";
import type { LedgerService } from "./ledger/service.js";
import type { Store } from "./store/types.js";
import type { X402Service } from "./x402/service.js";
import type { FeedbackService } from "./feedback/service.js";
import type { AgentsService } from "./agents/service.js";
import type { DispenserService } from "./dispenser/service.js";
import type { SettlementService } from "./settlement/service.js";
import type { MediaService } from "./media/service.js";
import type { VideoService } from "./video/service.js";
import type { AuthService } from "./auth/service.js";
import type { UsageService } from "./usage/service.js";


/** The domain services of a gateway, exposed as `gateway.services` for use from application code. */
export interface GatewayServices {
  /** The native catalog (bundled, or the cards given in options). */
  readonly catalog: Catalog;
  /** The extended catalog for `/v1/models/all`; the native one when none is configured. */
  readonly extendedCatalog: Catalog;
  /** The models service behind `/api/models`, when configured. */
  readonly modelsService: ModelsServiceOptions | undefined;
  /** The store the gateway was given (or its in-memory default). */
  readonly store: Store;
  /** Service keys. */
  readonly keys: KeyService;
  /** Key updates, rotation and their events; model allow-list and per-model cap rules. */
  readonly keyGovernance: KeyGovernance;
  /** Payment intents (prepare / settle / abort / sweep). */
  readonly ledger: LedgerService;
  /** Platform fee in basis points applied by the pricing function. */
  readonly feeBps: number;
  readonly x402: X402Service;
  readonly feedback: FeedbackService;
  readonly agents: AgentsService;
  readonly dispenser: DispenserService;
  readonly settlement: SettlementService;
  readonly media: MediaService;
  readonly video: VideoService;
  /** Wallet sessions (Sign-In with Ethereum). */
  readonly auth: AuthService;
  /** A wallet's spend by day and by model (`GET /api/usage`). */
  readonly usage: UsageService;

}
