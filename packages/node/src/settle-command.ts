/**
 * `tollgate settle`: runs one settlement batch with the configuration `serve` would use (the
 * same flags, env variables and `--config` file) and prints the batch result as JSON on stdout.
 * Exit codes: 0 every group settled (or nothing was queued), 1 a group failed or the batch could
 * not run, 2 the configuration is unusable (invalid options, settlement not configured, database
 * unreachable or its driver missing).
 */
import { GatewayOptionsError, createGateway } from "@tollgate/core";
import type { Gateway, GatewayOptions, GatewayServices } from "@tollgate/core";
import type { ServeConfig } from "./config.js";
import { redactSecrets, substitutionsOf } from "./config-env.js";
import { openStore } from "./open-store.js";

/**
 * Runs one batch. `options` are the gateway options the serve configuration stands for (the CLI
 * builds them); the store is the one `config.db` names (a SQLite file or a postgres:// URL; on
 * PostgreSQL it may run beside serving instances: batches lease their charges, so none is settled
 * twice). A configured `settlement.intervalMs` is ignored here: this command runs exactly one batch.
 */
export async function runSettle(config: ServeConfig, options: GatewayOptions): Promise<number> {
  // Values the --config file took from the environment (an RPC URL with its key) never reach stderr.
  const problem = (message: string): void => void process.stderr.write(`tollgate: ${redactSecrets(message, substitutionsOf(config.config))}\n`);
  const opened = await openStore(config);
  if (!opened.ok) {
    problem(opened.message);
    return opened.exitCode;
  }
  const { store } = opened;
  const settlement = options.settlement ? { ...options.settlement } : undefined;
  if (settlement) settlement.intervalMs = false;
  let gateway: Gateway<GatewayServices>;
  try {
    gateway = createGateway({ ...options, ...(settlement ? { settlement } : {}), store, sweepIntervalMs: 0 });
  } catch (error) {
    await store.close();
    if (!(error instanceof GatewayOptionsError)) throw error;
    for (const issue of error.issues) problem(issue);
    return 2;
  }
  try {
    if (!gateway.services.settlement.configured) {
      problem("settlement is not configured: put { chains, settlement: { internalSecret, treasury, chains: [{ chainId, spenderPrivateKey }] } } in the --config file (or TOLLGATE_CONFIG)");
      return 2;
    }
    const result = await gateway.services.settlement.runBatch();
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return result.failCount > 0 ? 1 : 0;
  } catch (error) {
    problem(`the settlement batch failed: ${(error as Error).message}`);
    return 1;
  } finally {
    await gateway.close();
  }
}
