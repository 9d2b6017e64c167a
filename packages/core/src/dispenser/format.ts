/** Exact formatting of USDC amounts for the dispenser's status (no floating point anywhere). */

/** USDC has 6 decimals: 1000000 atomic units are 1.00 USDC. */
export const USDC_DECIMALS = 6;

/**
 * Formats atomic USDC units exactly as `"$<units>.<decimals> USDC"`: at least 2 decimals, more
 * only where the amount has them (trailing zeros beyond 2 trimmed), no digit grouping.
 * Examples: `1000000n` → `"$1.00 USDC"`, `1500000n` → `"$1.50 USDC"`, `1234567n` →
 * `"$1.234567 USDC"`, `0n` → `"$0.00 USDC"`, `10n ** 30n` → `"$1000000000000000000000000.00 USDC"`.
 * Negative amounts get a leading minus (`"-$0.50 USDC"`).
 */
export function formatUsdc(atomic: bigint | number | string): string {
  let value = BigInt(atomic);
  const sign = value < 0n ? "-" : "";
  if (value < 0n) value = -value;
  const scale = 10n ** BigInt(USDC_DECIMALS);
  const whole = value / scale;
  const fraction = (value % scale).toString().padStart(USDC_DECIMALS, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${sign}$${whole}.${fraction} USDC`;
}
