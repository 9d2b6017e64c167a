import type { Clock } from "./clock.js";
import type { IdGenerator } from "./ids.js";
import type { HttpClient } from "./http/client.js";
import type { GatewayServices } from "./services.js";

/** Everything a route handler may use besides its parsed inputs. Built once by `createGateway`. */
export interface GatewayContext {
  readonly services: GatewayServices;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly http: HttpClient;
  readonly limits: { readonly jsonBodyBytes: number; readonly mediaBodyBytes: number };
  /** `"compose"` switches the token prefix and SSE event names (CONTRACT.md "Aliases"). */
  readonly compat: "compose" | undefined;
}
