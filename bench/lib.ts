/** Shared helpers of the benchmarks: timing, percentiles, machine description, docs output. */
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { resolve } from "node:path";

/** Nanosecond timer. */
export const now = (): bigint => process.hrtime.bigint();

/** Percentile (0..100) of a list of numbers, nearest-rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? NaN;
}

/** One line describing the machine and runtime. */
export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}`;
}

/** Formats milliseconds with 3 significant decimals. */
export const ms = (v: number): string => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(3));

/**
 * Replaces the section `name` of docs/benchmarks.md (between `<!-- bench:name -->` and
 * `<!-- /bench:name -->`) with `markdown`, appending it when absent.
 */
export function writeSection(name: string, markdown: string): void {
  const file = resolve(import.meta.dirname, "../docs/benchmarks.md");
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const text = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmarks\n";
  const at = text.indexOf(start);
  const next = at >= 0 ? text.slice(0, at) + block + text.slice(text.indexOf(end) + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}
