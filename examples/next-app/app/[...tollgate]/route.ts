// Every path the dashboard page does not own (/api/…, /v1/…, /agents, /openapi.json, …) is the
// gateway's. A catch-all never matches "/", so app/page.tsx keeps the root. PATCH is the key
// update (`PATCH /api/keys/{keyId}`) the dashboard's key panel sends.
import { createHandler } from "@tollgate/next";
import { clientIpOf, getGateway } from "../../lib/gateway";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, POST, PATCH, DELETE, OPTIONS } = createHandler({ handle: (request) => getGateway().handle(request) }, { clientIp: clientIpOf });
