/** The sign-in bar: "Sign in with wallet" before, the signed-in wallet and "Sign out" after. */
import type { WalletSession } from "@tollgate/client";
import { formatTime } from "../lib/format";

/** Props of {@link WalletBar}. */
export interface WalletBarProps {
  /** The live session, or null when signed out. */
  session: WalletSession | null;
  /** Whether this browser has an injected wallet (`window.ethereum`). */
  hasWallet: boolean;
  /** A sign-in or sign-out is under way. */
  busy: boolean;
  onSignIn: () => void;
  onSignOut: () => void;
}

/** See the file comment. */
export function WalletBar({ session, hasWallet, busy, onSignIn, onSignOut }: WalletBarProps) {
  if (session)
    return (
      <section className="signin" aria-label="Wallet session">
        <p className="wallet">
          Signed in as <code>{session.address}</code> (chain {session.chainId}) until {formatTime(session.expiresAt)}
        </p>
        <button type="button" onClick={onSignOut} disabled={busy}>
          Sign out
        </button>
      </section>
    );
  return (
    <section className="signin" aria-label="Wallet session">
      <p>
        Sign in with your Ethereum wallet (Sign-In with Ethereum: the wallet signs a one-time message, nothing is sent on-chain) to see its spend, keys and
        payment intents, and to create and revoke keys.
      </p>
      <button type="button" onClick={onSignIn} disabled={busy || !hasWallet}>
        {busy ? "Waiting for the wallet…" : "Sign in with wallet"}
      </button>
      {!hasWallet && <p className="status">No Ethereum wallet was found in this browser (window.ethereum): install or enable one, then reload.</p>}
    </section>
  );
}
