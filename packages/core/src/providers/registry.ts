/** The provider registry: providers by name, as cards name them in `provider`. */
import type { InferenceProvider, ProviderRegistry, VideoProvider } from "./types.js";

/** A provider as registered: inference methods, and video methods when it serves video. */
export type RegisteredProvider = InferenceProvider & Partial<VideoProvider>;

/**
 * Builds a {@link ProviderRegistry} from `{ name: provider }` (a plain object or a `Map`). The map
 * is copied, so later changes to it are not seen. `video(name)` answers the provider only when it
 * has both `createVideo` and `getVideo`. Throws a `TypeError` for an empty name.
 */
export function createProviderRegistry(map: Readonly<Record<string, RegisteredProvider>> | ReadonlyMap<string, RegisteredProvider>): ProviderRegistry {
  const entries = map instanceof Map ? [...map.entries()] : Object.entries(map as Record<string, RegisteredProvider>);
  const byName = new Map<string, RegisteredProvider>();
  for (const [name, provider] of entries) {
    if (name === "") throw new TypeError("a provider name must not be empty");
    byName.set(name, provider);
  }
  const names = [...byName.keys()].sort();
  return {
    inference: (name) => byName.get(name),
    video: (name) => {
      const p = byName.get(name);
      return p && typeof p.createVideo === "function" && typeof p.getVideo === "function" ? (p as VideoProvider) : undefined;
    },
    names: () => [...names],
  };
}
