/**
 * The store conformance suite: one set of vitest tests that every {@link Store} must pass
 * (memory, SQLite, Postgres…), including races with an exact count of winners and a model-based
 * property test. A store's test file is a few lines:
 *
 * ```ts
 * import { runStoreConformance } from "@tollgate/testing";
 * runStoreConformance("sqlite", { create: async () => createSqliteStore({ filename: tmpFile() }) });
 * ```
 */
import { describe, it } from "vitest";
import type { Store } from "@tollgate/core";
import { agentTests } from "./store-suite-agents.js";
import { chargeTests } from "./store-suite-charges.js";
import { feedbackTests } from "./store-suite-feedback.js";
import { keyTests } from "./store-suite-keys.js";
import { liveKeyTests } from "./store-suite-live-keys.js";
import { governanceTests } from "./store-suite-governance.js";
import { ledgerTests } from "./store-suite-ledger.js";
import { intentListTests } from "./store-suite-intent-list.js";
import { openIntentTests } from "./store-suite-open-intents.js";
import { propertyTests } from "./store-suite-property.js";
import { raceTests } from "./store-suite-races.js";
import { dispenserTests } from "./store-suite-dispenser.js";
import { x402Tests } from "./store-suite-x402.js";
import { transcriptRestTests } from "./store-suite-transcript-rests.js";
import { videoTests } from "./store-suite-video.js";
import { authTests } from "./store-suite-auth.js";
import { usageTests } from "./store-suite-usage.js";

/** The tests, grouped by capability (each group becomes a `describe`). */
export const storeConformanceGroups = {
  keys: keyTests,
  liveKeys: liveKeyTests,
  governance: governanceTests,
  ledger: ledgerTests,
  intentList: intentListTests,
  races: raceTests,
  openIntents: openIntentTests,
  charges: chargeTests,
  property: propertyTests,
  feedback: feedbackTests,
  agents: agentTests,
  dispenser: dispenserTests,
  x402: x402Tests,
  transcriptRests: transcriptRestTests,
  video: videoTests,
  auth: authTests,
  usage: usageTests,
} as const;

type Groups = typeof storeConformanceGroups;
/** The name of one conformance test, as accepted by `skip`. */
export type StoreConformanceTestName = { [G in keyof Groups]: keyof Groups[G] & string }[keyof Groups];

/** Options of {@link runStoreConformance}. */
export interface StoreConformanceOptions {
  /** Creates a fresh, empty store; called once per test. */
  create: () => Promise<Store>;
  /** Runs after each test, once the store is closed (e.g. deletes its file). */
  cleanup?: (store: Store) => Promise<void> | void;
  /** Tests to skip, each with the reason (shown in the test name). */
  skip?: Partial<Record<StoreConformanceTestName, string>>;
}

/** Registers the conformance suite for the store `name` in the current vitest file. */
export function runStoreConformance(name: string, options: StoreConformanceOptions): void {
  const known = new Set<string>(Object.values(storeConformanceGroups).flatMap((g) => Object.keys(g)));
  const skip: Partial<Record<string, string>> = options.skip ?? {};
  for (const unknown of Object.keys(skip).filter((n) => !known.has(n))) throw new Error(`runStoreConformance: unknown test in skip: "${unknown}"`);

  describe(`store conformance: ${name}`, () => {
    for (const [group, tests] of Object.entries(storeConformanceGroups)) {
      describe(group, () => {
        for (const [testName, test] of Object.entries(tests)) {
          const reason = skip[testName];
          if (reason !== undefined) {
            it.skip(`${testName} (skipped: ${reason})`, () => {});
            continue;
          }
          it(testName, async () => {
            const store = await options.create();
            try {
              await test({ store });
            } finally {
              await store.close();
              await options.cleanup?.(store);
            }
          });
        }
      });
    }
  });
}
