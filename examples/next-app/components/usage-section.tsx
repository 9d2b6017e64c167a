"use client";
/**
 * The wallet's usage (`GET /api/usage` over the chosen range): the "Spend" card with its chart,
 * then spend by model beside the open reservations (which come from the keys, apart from spend).
 * Read when mounted, when the range changes and on "Refresh"; a session the gateway no longer
 * accepts returns the page to "Sign in".
 */
import { useCallback, useEffect, useState } from "react";
import { AuthenticationError, type TollgateClient } from "@tollgate/client";
import { describeError, fetchUsage } from "../lib/api";
import type { GovernedKey } from "../lib/key-admin";
import { DEFAULT_RANGE_DAYS, usageRange, type RangeDays } from "../lib/usage";
import { parseAtomic } from "../lib/usdc";
import { ModelTable } from "./model-table";
import { ReservationsPanel } from "./reservations-panel";
import { SpendSummary, type UsageState } from "./spend-summary";

/** Props of {@link UsageSection}. */
export interface UsageSectionProps {
  client: TollgateClient;
  keys: readonly GovernedKey[];
  onSessionEnded: () => void;
}

/** See the file comment. */
export function UsageSection({ client, keys, onSessionEnded }: UsageSectionProps) {
  const [range, setRange] = useState<RangeDays>(DEFAULT_RANGE_DAYS);
  const [version, setVersion] = useState(0);
  const [usage, setUsage] = useState<UsageState>({ state: "loading" });
  const refresh = useCallback(() => setVersion((v) => v + 1), []);

  useEffect(() => {
    const controller = new AbortController();
    setUsage({ state: "loading" });
    fetchUsage(client, usageRange(Date.now(), range), controller.signal).then(
      (report) => !controller.signal.aborted && setUsage({ state: "ready", report }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        if (error instanceof AuthenticationError) onSessionEnded();
        else setUsage({ state: "error", message: describeError(error) });
      },
    );
    return () => controller.abort();
  }, [client, range, version, onSessionEnded]);

  const report = usage.state === "ready" ? usage.report : undefined;
  return (
    <>
      <SpendSummary usage={usage} keys={keys} range={range} onRange={setRange} onRefresh={refresh} />
      <div className="usage-grid">
        {report ? (
          <ModelTable models={report.models} total={parseAtomic(report.totals.spent)} calls={report.totals.calls} from={report.from} to={report.to} />
        ) : (
          <section aria-labelledby="models-heading" className="card" aria-busy={usage.state === "loading"}>
            <h2 id="models-heading">Spend by model</h2>
            <p className="empty">{usage.state === "loading" ? "Loading…" : "Not available: see the error above."}</p>
          </section>
        )}
        <ReservationsPanel keys={keys} />
      </div>
    </>
  );
}
