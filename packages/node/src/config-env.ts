/**
 * Environment references in the `--config` JSON file, so secrets (API keys, private keys, RPC
 * URLs with a key in them) stay out of the file:
 *
 * - `${NAME}` inside any JSON string value is replaced by the environment variable `NAME`
 *   (`NAME` is letters, digits and `_`, not starting with a digit). It may be the whole string
 *   (`"apiKey": "${OPENAI_API_KEY}"`) or a part of it (`"rpcUrl": "https://rpc.example/v2/${RPC_KEY}"`).
 * - `$${` is a literal `${`; any other `${` that does not start a well-formed reference is a problem,
 *   so a typo never reaches an upstream as text.
 * - Only string values are read; object keys, numbers and booleans are taken as written.
 * - A variable that is unset or empty is a problem naming the variable and the JSON path that uses
 *   it; all problems are reported at once.
 *
 * Problems never contain a variable's value, and {@link redactSecrets} masks the values that were
 * substituted in any text printed afterwards (the start-up banner, start-up errors).
 */

/** One substitution: which variable filled which JSON path (dot-separated, array indexes as numbers). */
export interface EnvReference {
  readonly name: string;
  readonly path: string;
}

/** What a successful expansion substituted. */
export interface EnvSubstitutions {
  /** Each substitution in document order (names and paths only, never values). */
  readonly references: readonly EnvReference[];
  /** Substituted value → the reference it came from (`${NAME}`), for {@link redactSecrets}. */
  readonly masks: ReadonlyMap<string, string>;
}

/** The outcome of {@link expandEnvReferences}. */
export type EnvExpansion = ({ readonly ok: true; readonly value: unknown } & EnvSubstitutions) | { readonly ok: false; readonly problems: readonly string[] };

/** Substituted values shorter than this are not masked by {@link redactSecrets}: masking them would garble unrelated text, and so short a value is no secret. */
export const MIN_REDACTED_LENGTH = 4;

const TOKEN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\{/g;

/**
 * Returns a copy of `json` with every `${NAME}` in its string values replaced from `env` (see the
 * module comment for the syntax). Never throws and never mutates `json`. On failure, `problems`
 * holds one line per bad reference, of the form `media.providers.openai.apiKey: ${OPENAI_API_KEY}
 * is not set in the environment`.
 */
export function expandEnvReferences(json: unknown, env: Readonly<Record<string, string | undefined>>): EnvExpansion {
  const problems: string[] = [];
  const references: EnvReference[] = [];
  const masks = new Map<string, string>();

  const expandString = (text: string, path: string): string =>
    text.replace(TOKEN, (match: string, name: string | undefined) => {
      if (match === "$${") return "${";
      if (name === undefined) {
        problems.push(`${where(path)}"\${" must start a reference such as \${OPENAI_API_KEY} (write $\${ for a literal "\${")`);
        return match;
      }
      const value = env[name];
      if (value === undefined || value === "") {
        problems.push(`${where(path)}\${${name}} is ${value === undefined ? "not set" : "empty"} in the environment`);
        return match;
      }
      references.push({ name, path });
      if (value.length >= MIN_REDACTED_LENGTH && !masks.has(value)) masks.set(value, `\${${name}}`);
      return value;
    });

  const walk = (value: unknown, path: string): unknown => {
    if (typeof value === "string") return expandString(value, path);
    if (Array.isArray(value)) return value.map((item, i) => walk(item, join(path, String(i))));
    // fromEntries defines own properties, so a "__proto__" key stays a key.
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, join(path, key))]));
    return value;
  };

  const value = walk(json, "");
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value, references, masks };
}

/** Masks every substituted value in `text` with the reference it came from (`${OPENAI_API_KEY}`), longest value first. */
export function redactSecrets(text: string, substitutions: Pick<EnvSubstitutions, "masks"> | undefined): string {
  if (!substitutions) return text;
  let out = text;
  for (const [value, mask] of [...substitutions.masks].sort((a, b) => b[0].length - a[0].length)) out = out.split(value).join(mask);
  return out;
}

const registry = new WeakMap<object, EnvSubstitutions>();

/** Records what was substituted into `options` (an object {@link expandEnvReferences} returned), for {@link substitutionsOf}. */
export function recordSubstitutions(options: object, substitutions: EnvSubstitutions): void {
  registry.set(options, substitutions);
}

/** What was substituted into `options` from the environment, or undefined when nothing was (or it is not such an object). */
export function substitutionsOf(options: unknown): EnvSubstitutions | undefined {
  return typeof options === "object" && options !== null ? registry.get(options) : undefined;
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);
const where = (path: string) => (path === "" ? "" : `${path}: `);
