/**
 * What a USDC write moves, read from its signed bytes: the `Transfer(from, to, value)` log it must
 * emit. A transaction is judged by that effect, not by its hash alone, when another transaction
 * took its nonce: a wallet's "speed up" re-sends the same call under a new hash and moves the same
 * funds, while a "cancel" (or any other transaction) moves none of them.
 */
import { decodeFunctionData, parseEventLogs, parseTransaction, type Log } from "viem";
import type { Address, Hex } from "./types.js";
import { USDC_ABI } from "./usdc-abi.js";

/** The token movement of a write: `value` atomic units from `from` to `to`. Addresses lower-case. */
export interface TransferEffect {
  readonly from: Address;
  readonly to: Address;
  readonly value: bigint;
}

/**
 * The movement the signed transaction `raw` of `sender` makes (`transfer`, `transferFrom`,
 * `transferWithAuthorization`), or undefined when its calldata is none of these.
 */
export function effectOf(raw: Hex, sender: Address): TransferEffect | undefined {
  try {
    const data = parseTransaction(raw).data;
    if (!data) return undefined;
    const call = decodeFunctionData({ abi: USDC_ABI, data });
    const args = call.args as readonly unknown[];
    const lower = (a: unknown) => String(a).toLowerCase() as Address;
    if (call.functionName === "transfer") return { from: lower(sender), to: lower(args[0]), value: args[1] as bigint };
    if (call.functionName === "transferFrom" || call.functionName === "transferWithAuthorization")
      return { from: lower(args[0]), to: lower(args[1]), value: args[2] as bigint };
    return undefined;
  } catch {
    return undefined;
  }
}

/** Whether `logs` (a receipt's, or a log query's) hold the token `usdc`'s `Transfer` that is `effect`. */
export function logsEffect(logs: readonly Log[], usdc: Address, effect: TransferEffect): boolean {
  const own = logs.filter((log) => log.address.toLowerCase() === usdc);
  return parseEventLogs({ abi: USDC_ABI, eventName: "Transfer", logs: own }).some(
    (e) => e.args.from.toLowerCase() === effect.from && e.args.to.toLowerCase() === effect.to && e.args.value === effect.value,
  );
}
