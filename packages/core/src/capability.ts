import type { Catalog } from "./catalog/catalog.js";
import type { Clock } from "./clock.js";
import type { HttpClient } from "./http/client.js";
import type { IdGenerator } from "./ids.js";
import type { KeyService } from "./keys/service.js";
import type { KeyGovernance } from "./keys/governance.js";
import type { FundingGuard } from "./settlement/funding.js";
import type { LedgerService } from "./ledger/service.js";
import type { ResolvedOptions } from "./options.js";
import type { Store } from "./store/types.js";
import type { GatewayLogger } from "./observability/logger.js";
import type { Telemetry } from "./observability/telemetry.js";

/**
 * What every capability's service factory receives. Each capability reads its own validated
 * sub-object of `options` (e.g. `options.feedback`), whose schema lives in its folder.
 */
export interface CapabilityDeps {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly http: HttpClient;
  readonly options: ResolvedOptions;
  readonly keys: KeyService;
  /** Key updates with their recorded events (the settlement service freezes underfunded wallets' keys through it). */
  readonly keyGovernance: KeyGovernance;
  /** Whether a wallet's funds back its keys on a chain. */
  readonly funding: FundingGuard;
  readonly ledger: LedgerService;
  readonly feeBps: number;
  readonly compat: "compose" | undefined;
  /** Where the service reports what it did (charges, refusals, verifications, batches, upstream calls) for the metrics. */
  readonly telemetry: Telemetry;
  /** Where the service logs its warnings and errors (background failures). */
  readonly logger: GatewayLogger;
  /** Registers cleanup (stop pollers, timers) run by `gateway.close()` before the store closes. */
  readonly onClose: (fn: () => Promise<void> | void) => void;
  /** Registers a start-up line ("what is enabled") for `gateway.describe()`. */
  readonly describe: (line: () => string) => void;
}
