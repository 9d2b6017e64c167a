"use client";
/**
 * The wallet dashboard: an address form, then the wallet's keys, spend totals and recent payment
 * intents, all read from the gateway's HTTP API in the browser with `@tollgate/client`. The address is mirrored in
 * `?address=` so a view can be linked and reloaded.
 */
import { useCallback, useEffect, useRef, useState, type FormEvent } from "react";
import type { IntentListItem, ServiceKey, TollgateClient } from "@tollgate/client";
import { describeError, fetchAllKeys, fetchIntents, walletClient } from "../lib/api";
import { IntentsTable } from "./intents-table";
import { KeysTable } from "./keys-table";
import { SpendSummary } from "./spend-summary";

type View =
  | { state: "idle" }
  | { state: "loading"; address: string }
  | { state: "error"; address: string; message: string }
  | { state: "ready"; address: string; keys: ServiceKey[]; intents: IntentListItem[]; nextCursor: string | null };

/** Props of {@link Dashboard}. */
export interface DashboardProps {
  /** Address from the page URL, loaded at once when not empty. */
  initialAddress: string;
}

/** The whole dashboard; see the file comment. */
export function Dashboard({ initialAddress }: DashboardProps) {
  const [input, setInput] = useState(initialAddress);
  const [view, setView] = useState<View>({ state: "idle" });
  const [more, setMore] = useState<{ loading: boolean; error?: string }>({ loading: false });
  // Only the latest load may write state: an older answer arriving late is dropped.
  const current = useRef<{ controller: AbortController; client: TollgateClient } | null>(null);

  const load = useCallback(async (address: string) => {
    current.current?.controller.abort();
    const controller = new AbortController();
    const client = walletClient(address);
    current.current = { controller, client };
    setView({ state: "loading", address });
    setMore({ loading: false });
    try {
      const [keys, page] = await Promise.all([fetchAllKeys(client, controller.signal), fetchIntents(client, null, controller.signal)]);
      if (!controller.signal.aborted) setView({ state: "ready", address, keys, intents: page.intents, nextCursor: page.next_cursor });
    } catch (error) {
      if (!controller.signal.aborted) setView({ state: "error", address, message: describeError(error) });
    }
  }, []);

  useEffect(() => {
    if (initialAddress.trim()) void load(initialAddress.trim());
    return () => current.current?.controller.abort();
  }, [initialAddress, load]);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const address = input.trim();
    if (!address) return;
    const url = new URL(window.location.href);
    url.searchParams.set("address", address);
    window.history.replaceState(null, "", url);
    void load(address);
  }

  async function loadMore() {
    if (view.state !== "ready" || !view.nextCursor) return;
    if (!current.current) return;
    const { controller, client } = current.current;
    setMore({ loading: true });
    try {
      const page = await fetchIntents(client, view.nextCursor, controller.signal);
      if (controller.signal.aborted) return;
      setView({ ...view, intents: [...view.intents, ...page.intents], nextCursor: page.next_cursor });
      setMore({ loading: false });
    } catch (error) {
      if (!controller.signal.aborted) setMore({ loading: false, error: describeError(error) });
    }
  }

  return (
    <>
      <form className="lookup" onSubmit={onSubmit} role="search" aria-label="Wallet lookup">
        <label htmlFor="address">Wallet address</label>
        <div className="lookup-row">
          <input
            id="address"
            name="address"
            type="text"
            required
            spellCheck={false}
            autoComplete="off"
            placeholder="0x…"
            value={input}
            onChange={(e) => setInput(e.target.value)}
          />
          <button type="submit" disabled={view.state === "loading"}>
            Show dashboard
          </button>
        </div>
      </form>

      {view.state === "loading" && (
        <p className="status" role="status">
          Loading {view.address}…
        </p>
      )}
      {view.state === "error" && (
        <div className="error" role="alert">
          <strong>Could not load this wallet.</strong> {view.message}
        </div>
      )}
      {view.state === "ready" && (
        <div className="results" aria-live="polite">
          <p className="wallet">
            Wallet <code>{view.address}</code>
          </p>
          <SpendSummary keys={view.keys} />
          <KeysTable keys={view.keys} />
          <IntentsTable
            intents={view.intents}
            keys={view.keys}
            hasMore={view.nextCursor !== null}
            loadingMore={more.loading}
            loadMoreError={more.error}
            onLoadMore={() => void loadMore()}
          />
        </div>
      )}
    </>
  );
}
