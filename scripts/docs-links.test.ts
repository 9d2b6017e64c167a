/**
 * The repository's Markdown (README.md, docs/, packages/ and examples/ READMEs, every tracked or
 * new `.md` file) refers only to what exists: relative links resolve to files or folders (and a
 * `#fragment` into a Markdown file to one of its headings, slugged as GitHub does), code spans
 * naming a repository path (`packages/…`, `docs/…`, `scripts/…`, `examples/…`, `bench/…`,
 * `.ci/…`) name an existing one, and a package README — what npm shows — links only to absolute
 * URLs or its own headings. No Markdown cites the planning notes kept outside the repository (the
 * names the last checks look for).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import GithubSlugger from "github-slugger";
import MarkdownIt from "markdown-it";
import type { Token } from "markdown-it";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const md = new MarkdownIt({ html: true });

/** Every `.md` file git tracks, plus new ones it does not ignore. */
function markdownFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "*.md"], { cwd: root, encoding: "utf8" });
  return [...new Set(out.split("\0").filter((f) => f !== "" && existsSync(join(root, f))))].sort();
}

interface Parsed {
  readonly links: { href: string; line: number }[];
  readonly codeSpans: { text: string; line: number }[];
  readonly headings: Set<string>;
}

const parsed = new Map<string, Parsed>();

/** Links, inline code and heading slugs of one file (cached: anchors are looked up in other files too). */
function parse(file: string): Parsed {
  const hit = parsed.get(file);
  if (hit) return hit;
  const tokens = md.parse(readFileSync(join(root, file), "utf8"), {});
  const result: Parsed = { links: [], codeSpans: [], headings: new Set() };
  const slugger = new GithubSlugger();
  tokens.forEach((block, i) => {
    const line = (block.map?.[0] ?? 0) + 1;
    if (block.type === "heading_open") result.headings.add(slugger.slug(plainText(tokens[i + 1]?.children ?? [])));
    for (const t of block.children ?? []) {
      if (t.type === "link_open") result.links.push({ href: String(t.attrGet("href") ?? ""), line });
      if (t.type === "image") result.links.push({ href: String(t.attrGet("src") ?? ""), line });
      if (t.type === "code_inline") result.codeSpans.push({ text: t.content, line });
    }
  });
  parsed.set(file, result);
  return result;
}

/** The text GitHub slugs a heading from: its words and code, without markup. */
const plainText = (children: Token[]): string => children.map((c) => (c.type === "text" || c.type === "code_inline" ? c.content : "")).join("");

const isAbsolute = (href: string) => /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//");

/** What is wrong with one relative link of `file`, or null. */
function checkRelative(file: string, href: string): string | null {
  const [rawPath = "", fragment] = href.split("#", 2) as [string, string | undefined];
  const path = decodeURIComponent(rawPath.split("?")[0]!);
  const target = path === "" ? join(root, file) : resolve(root, dirname(file), path);
  const inRepo = relative(root, target);
  if (inRepo.startsWith("..") || inRepo.split(sep).includes("..")) return `${href} points outside the repository`;
  if (!existsSync(target)) return `${href}: ${inRepo} does not exist`;
  if (fragment !== undefined && fragment !== "" && statSync(target).isFile() && target.endsWith(".md")) {
    if (!parse(inRepo.split(sep).join("/")).headings.has(fragment)) return `${href}: ${inRepo} has no heading #${fragment}`;
  }
  return null;
}

const files = markdownFiles();
const PLANNING_NOTES = /\b(CONTRACT|DESIGN|SPEC|STYLE)\.md\b/;
const REPO_PATH = /^(packages|docs|scripts|examples|bench|\.ci)\/[^\s*<>{}…]*$/;

describe("the repository's Markdown", () => {
  it("finds the files to check", () => {
    expect(files).toEqual(expect.arrayContaining(["README.md", "docs/providers.md", "docs/x402.md", "packages/core/README.md", "packages/sqlite/README.md"]));
  });

  it("links only to files, folders and headings that exist", () => {
    const relativeLinks = files.flatMap((file) =>
      parse(file)
        .links.filter((l) => l.href !== "" && !isAbsolute(l.href))
        .map((l) => ({ file, ...l })),
    );
    expect(relativeLinks.length).toBeGreaterThan(40); // the docs do cross-link; a parser that found none would pass vacuously
    const broken = relativeLinks.flatMap((l) => {
      const problem = checkRelative(l.file, l.href);
      return problem ? [`${l.file}:${l.line}: ${problem}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it("names only repository paths that exist in code spans", () => {
    const missing = files.flatMap((file) =>
      parse(file)
        .codeSpans.filter((c) => REPO_PATH.test(c.text) && !existsSync(join(root, c.text.replace(/[#:].*$/, ""))))
        .map((c) => `${file}:${c.line}: \`${c.text}\` does not exist`),
    );
    expect(missing).toEqual([]);
  });

  it("gives every package a README whose links work on the npm page: absolute URLs or its own headings", () => {
    const packages = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "packages/*/package.json"], {
      cwd: root,
      encoding: "utf8",
    })
      .split("\0")
      .filter(Boolean)
      .map((f) => dirname(f));
    expect(packages.length).toBeGreaterThanOrEqual(8);
    expect(packages.filter((p) => !existsSync(join(root, p, "README.md")))).toEqual([]);
    const relativeLinks = packages.flatMap((p) =>
      parse(`${p}/README.md`)
        .links.filter((l) => !isAbsolute(l.href) && !l.href.startsWith("#"))
        .map((l) => `${p}/README.md:${l.line}: ${l.href}`),
    );
    expect(relativeLinks).toEqual([]);
  });

  it("never cites the planning notes that are not in the repository", () => {
    const cited = files.flatMap((file) =>
      readFileSync(join(root, file), "utf8")
        .split("\n")
        .flatMap((text, i) => (PLANNING_NOTES.test(text) ? [`${file}:${i + 1}: ${text.trim().slice(0, 120)}`] : [])),
    );
    expect(cited).toEqual([]);
  });

  it("catches what it is meant to catch", () => {
    // The checks above pass on the real files; these inputs must fail them.
    expect(checkRelative("docs/x402.md", "providers.md#no-such-heading")).toBe(
      "providers.md#no-such-heading: docs/providers.md has no heading #no-such-heading",
    );
    expect(checkRelative("docs/x402.md", "nope.md")).toBe("nope.md: docs/nope.md does not exist");
    expect(checkRelative("packages/core/README.md", "../../../outside.md")).toBe("../../../outside.md points outside the repository");
    expect(checkRelative("docs/x402.md", "providers.md#secrets-from-the-environment")).toBeNull();
    expect(checkRelative("README.md", "packages/core")).toBeNull();
    expect(REPO_PATH.test("packages/core/src/testing/")).toBe(true);
    expect([`see ${"DESIGN"}.md "Money invariants"`, `(${"CONTRACT"}.mdx)`, "docs/api.md"].map((t) => PLANNING_NOTES.test(t))).toEqual([true, false, false]);
  });
});
