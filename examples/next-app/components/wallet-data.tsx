"use client";
/**
 * The signed-in wallet's spend (chart, by model), open reservations, keys and recent payment
 * intents, read from the gateway's HTTP API with the session cookie. Mounted once per session
 * (keyed by address by its parent). A key created here is added at the top; a key changed in its
 * panel (update, rotation) or revoked replaces its row, so the tables and the totals show what
 * the gateway answered.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { AuthenticationError, type IntentListItem, type TollgateClient } from "@tollgate/client";
import { describeError, fetchAllKeys, fetchIntents } from "../lib/api";
import type { GovernedKey } from "../lib/key-admin";
import { IntentsTable } from "./intents-table";
import { KeyCreate } from "./key-create";
import { KeysTable } from "./keys-table";
import { UsageSection } from "./usage-section";

type View =
  { state: "loading" } | { state: "error"; message: string } | { state: "ready"; keys: GovernedKey[]; intents: IntentListItem[]; nextCursor: string | null };

/** Props of {@link WalletData}. */
export interface WalletDataProps {
  client: TollgateClient;
  /** The chain the wallet signed in with: new keys are made on it. */
  chainId: number;
  /** Called when the gateway no longer accepts the session (expired or signed out elsewhere). */
  onSessionEnded: () => void;
}

/** See the file comment. */
export function WalletData({ client, chainId, onSessionEnded }: WalletDataProps) {
  const [view, setView] = useState<View>({ state: "loading" });
  const [more, setMore] = useState<{ loading: boolean; error?: string }>({ loading: false });
  const controller = useRef<AbortController | null>(null);

  const fail = useCallback(
    (error: unknown, signal: AbortSignal) => {
      if (signal.aborted) return;
      if (error instanceof AuthenticationError) onSessionEnded();
      else setView({ state: "error", message: describeError(error) });
    },
    [onSessionEnded],
  );

  useEffect(() => {
    const own = new AbortController();
    controller.current = own;
    Promise.all([fetchAllKeys(client, own.signal), fetchIntents(client, null, own.signal)]).then(
      ([keys, page]) => {
        if (!own.signal.aborted) setView({ state: "ready", keys, intents: page.intents, nextCursor: page.next_cursor });
      },
      (error: unknown) => fail(error, own.signal),
    );
    return () => own.abort();
  }, [client, fail]);

  const replaceKey = useCallback((key: GovernedKey) => {
    setView((v) => (v.state === "ready" ? { ...v, keys: v.keys.map((k) => (k.keyId === key.keyId ? key : k)) } : v));
  }, []);
  // Newest first, as the gateway lists keys. A new session key supersedes the chain's previous one: read the keys again.
  const addKey = useCallback(
    (key: GovernedKey) => {
      setView((v) => (v.state === "ready" ? { ...v, keys: [key, ...v.keys] } : v));
      if (key.purpose !== "session") return;
      const signal = controller.current?.signal;
      if (signal)
        fetchAllKeys(client, signal).then(
          (keys) => !signal.aborted && setView((v) => (v.state === "ready" ? { ...v, keys } : v)),
          (error: unknown) => fail(error, signal),
        );
    },
    [client, fail],
  );

  async function loadMore() {
    const signal = controller.current?.signal;
    if (view.state !== "ready" || !view.nextCursor || !signal) return;
    setMore({ loading: true });
    try {
      const page = await fetchIntents(client, view.nextCursor, signal);
      if (signal.aborted) return;
      // Functional: a key edited meanwhile keeps its new values.
      setView((v) => (v.state === "ready" ? { ...v, intents: [...v.intents, ...page.intents], nextCursor: page.next_cursor } : v));
      setMore({ loading: false });
    } catch (error) {
      if (!signal.aborted) setMore({ loading: false, error: describeError(error) });
    }
  }

  if (view.state === "loading")
    return (
      <p className="status" role="status">
        Loading the wallet&apos;s keys and intents…
      </p>
    );
  if (view.state === "error")
    return (
      <div className="error" role="alert">
        <strong>Could not load this wallet.</strong> {view.message}
      </div>
    );
  return (
    <div className="results" aria-live="polite">
      <UsageSection client={client} keys={view.keys} onSessionEnded={onSessionEnded} />
      <KeyCreate chainId={chainId} onCreated={addKey} onSessionEnded={onSessionEnded} />
      <KeysTable keys={view.keys} onKeyChanged={replaceKey} onSessionEnded={onSessionEnded} />
      <IntentsTable
        intents={view.intents}
        keys={view.keys}
        hasMore={view.nextCursor !== null}
        loadingMore={more.loading}
        loadMoreError={more.error}
        onLoadMore={() => void loadMore()}
      />
    </div>
  );
}
