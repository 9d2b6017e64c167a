"use client";
/**
 * The wallet dashboard: the wallet signs in with Sign-In with Ethereum (an EIP-1193 wallet in the
 * browser signs the gateway's SIWE message; the gateway answers with an HttpOnly session cookie),
 * then the page shows only that wallet's spend, keys and payment intents, and lets it create and
 * revoke keys. No address is typed in: the gateway serves the wallet the cookie proves. "Sign
 * out" ends the session.
 */
import { useCallback, useEffect, useMemo, useState } from "react";
import type { WalletSession } from "@tollgate/client";
import { currentSession, describeError, gatewayClient, signInWithWallet } from "../lib/api";
import { injectedWallet } from "../lib/wallet";
import { WalletBar } from "./wallet-bar";
import { WalletData } from "./wallet-data";

type Auth = { state: "checking" } | { state: "signed-out" } | { state: "busy"; session: WalletSession | null } | { state: "signed-in"; session: WalletSession };

/** The whole dashboard; see the file comment. */
export function Dashboard() {
  const client = useMemo(() => (typeof window === "undefined" ? null : gatewayClient()), []);
  const [auth, setAuth] = useState<Auth>({ state: "checking" });
  const [error, setError] = useState<string | undefined>();
  const [hasWallet, setHasWallet] = useState(false);

  // A session cookie from an earlier visit signs the page in at once.
  useEffect(() => {
    if (!client) return;
    setHasWallet(injectedWallet() !== undefined);
    const controller = new AbortController();
    currentSession(client, controller.signal).then(
      (session) => !controller.signal.aborted && setAuth(session ? { state: "signed-in", session } : { state: "signed-out" }),
      (e: unknown) => {
        if (controller.signal.aborted) return;
        setAuth({ state: "signed-out" });
        setError(describeError(e));
      },
    );
    return () => controller.abort();
  }, [client]);

  const onSessionEnded = useCallback(() => {
    setAuth({ state: "signed-out" });
    setError("The session ended (expired or signed out elsewhere): sign in again.");
  }, []);

  async function signIn() {
    const provider = injectedWallet();
    if (!client || !provider) return;
    setError(undefined);
    setAuth({ state: "busy", session: null });
    try {
      setAuth({ state: "signed-in", session: await signInWithWallet(client, provider) });
    } catch (e) {
      setAuth({ state: "signed-out" });
      setError(describeError(e));
    }
  }

  async function signOut() {
    if (!client || auth.state !== "signed-in") return;
    setError(undefined);
    setAuth({ state: "busy", session: auth.session });
    try {
      await client.auth.signOut();
      setAuth({ state: "signed-out" });
    } catch (e) {
      setAuth({ state: "signed-in", session: auth.session });
      setError(describeError(e));
    }
  }

  if (!client || auth.state === "checking")
    return (
      <p className="status" role="status">
        Checking for a wallet session…
      </p>
    );
  const session = auth.state === "signed-in" || auth.state === "busy" ? auth.session : null;
  return (
    <>
      <WalletBar session={session} hasWallet={hasWallet} busy={auth.state === "busy"} onSignIn={() => void signIn()} onSignOut={() => void signOut()} />
      {error && (
        <div className="error" role="alert">
          <strong>{session ? "Could not sign out." : "Not signed in."}</strong> {error}
        </div>
      )}
      {auth.state === "signed-in" && <WalletData key={auth.session.address} client={client} chainId={auth.session.chainId} onSessionEnded={onSessionEnded} />}
    </>
  );
}
