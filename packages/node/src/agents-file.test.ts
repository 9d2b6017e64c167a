import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { parseOptions, serveOptions } from "./config.js";

const dir = mkdtempSync(join(tmpdir(), "tollgate-agents-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const card = { walletAddress: "0x1111111111111111111111111111111111111111", name: "A", description: "d", plugins: [], skills: [], protocols: [], x402Support: false };

it("--agents reads an array or { agents } from a JSON file and refuses anything else in one line", () => {
  const plain = join(dir, "plain.json");
  const wrapped = join(dir, "wrapped.json");
  const bad = join(dir, "bad.json");
  writeFileSync(plain, JSON.stringify([card]));
  writeFileSync(wrapped, JSON.stringify({ agents: [card] }));
  writeFileSync(bad, JSON.stringify({ nope: 1 }));
  for (const file of [plain, wrapped]) {
    const r = parseOptions(serveOptions, ["--agents", file], {});
    expect(r.kind === "ok" && r.config.agents).toEqual([card]);
  }
  const fromEnv = parseOptions(serveOptions, [], { TOLLGATE_AGENTS: plain });
  expect(fromEnv.kind === "ok" && fromEnv.config.agents).toEqual([card]);
  for (const [file, fragment] of [
    [bad, "must hold an array of agent cards"],
    [join(dir, "missing.json"), "cannot be read: ENOENT"],
  ] as const) {
    const r = parseOptions(serveOptions, ["--agents", file], {});
    expect(r.kind).toBe("error");
    expect(r.kind === "error" && r.problems.join("\n")).toContain(fragment);
  }
});
