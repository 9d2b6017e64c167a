/**
 * EIP-3009 `TransferWithAuthorization` helpers (the x402 `exact` EVM scheme): EIP-712 types,
 * signing with a viem LocalAccount, off-chain verification (EOA signatures), random nonces.
 */
import { bytesToHex, verifyTypedData } from "viem";
import type { Hex, TokenDomain, TransferAuthorization } from "./types.js";

/** The EIP-712 types of USDC's `transferWithAuthorization` (primary type `TransferWithAuthorization`). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/** The EIP-712 typed data of one authorization, as `signTypedData` takes it. */
export interface TransferAuthorizationTypedData {
  readonly domain: { readonly name: string; readonly version: string; readonly chainId: number; readonly verifyingContract: Hex };
  readonly types: typeof TRANSFER_WITH_AUTHORIZATION_TYPES;
  readonly primaryType: "TransferWithAuthorization";
  readonly message: TransferAuthorization;
}

function typedData(domain: TokenDomain, auth: TransferAuthorization): TransferAuthorizationTypedData {
  return {
    domain: {
      name: domain.name,
      version: domain.version,
      chainId: domain.chainId,
      verifyingContract: domain.verifyingContract,
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: "TransferWithAuthorization" as const,
    message: {
      from: auth.from,
      to: auth.to,
      value: auth.value,
      validAfter: auth.validAfter,
      validBefore: auth.validBefore,
      nonce: auth.nonce,
    },
  };
}

/**
 * What signs an authorization: a viem `LocalAccount` (`privateKeyToAccount(…)`) or anything with the
 * same EIP-712 `signTypedData`. Declared here so the published types need no viem types.
 */
export interface TypedDataSigner {
  signTypedData(typedData: TransferAuthorizationTypedData): Promise<Hex>;
}

/** Signs an authorization with `account` (which should be `auth.from`). Returns the 65-byte signature. */
export async function signTransferAuthorization(account: TypedDataSigner, domain: TokenDomain, auth: TransferAuthorization): Promise<Hex> {
  return account.signTypedData(typedData(domain, auth));
}

/**
 * Whether `signature` is `auth.from`'s EOA signature of `auth` under `domain`. Returns false (never
 * throws) on a malformed signature or authorization. Does not check time bounds or nonce use.
 * Smart-contract wallets (EIP-1271) are not supported here: they verify only on-chain.
 */
export async function verifyTransferAuthorization(domain: TokenDomain, auth: TransferAuthorization, signature: Hex): Promise<boolean> {
  try {
    return await verifyTypedData({ address: auth.from, signature, ...typedData(domain, auth) });
  } catch {
    return false;
  }
}

/** A random 32-byte EIP-3009 nonce. */
export function randomNonce(): Hex {
  return bytesToHex(globalThis.crypto.getRandomValues(new Uint8Array(32)));
}
