/** The routes of SPEC.md "Models" (CONTRACT.md "Models"). All public. */
import { z } from "zod";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { json } from "../http/respond.js";
import { clampedInt, optionalText } from "../http/schemas.js";
import type { ModelCard } from "./card.js";
import { fetchModelsService } from "./models-service.js";

const filters = z.object({
  q: optionalText(200),
  provider: optionalText(64),
  modality: optionalText(32),
  operation: optionalText(32),
  limit: clampedInt(50, 1, 200),
  cursor: optionalText(2000),
});

const modelParams = z.object({ model: z.string().min(1).max(200) });
const providerQuery = z.object({ provider: optionalText(64) });

/** The parameter metadata view of a card (`/v1/models/{model}/params`). */
export function paramsView(card: ModelCard) {
  const params = card.params ?? {};
  const defaults: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(params)) if (spec.default !== undefined) defaults[name] = spec.default;
  return { modelId: card.modelId, provider: card.provider, modality: card.operations[0]!.modality, params, defaults };
}

/** Builds the catalog route table. */
export function catalogRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/v1/models",
      tag: "models",
      summary: "List and filter the native catalog (q, provider, modality, operation, limit, cursor).",
      query: filters,
      handle: ({ query, gateway }) => json(gateway.services.catalog.search(query)),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/models/search",
      tag: "models",
      summary: "Search the native catalog; filters in the JSON body, the query string as fallback.",
      body: filters,
      bodyFromQuery: true,
      handle: ({ body, gateway }) => json(gateway.services.catalog.search(body)),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/models/all",
      tag: "models",
      summary: "List the extended catalog when configured, else the native one (same filters).",
      query: filters,
      handle: ({ query, gateway }) => json(gateway.services.extendedCatalog.search(query)),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/models/:model+/params",
      tag: "models",
      summary: "Parameter metadata and defaults of one model (URL-encoded id; ?provider selects another).",
      params: modelParams,
      query: providerQuery,
      handle: ({ params, query, gateway }) => json(paramsView(gateway.services.catalog.get(params.model, query.provider))),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/models/:model+",
      tag: "models",
      summary: "One native model card (URL-encoded id; ?provider selects another provider).",
      params: modelParams,
      query: providerQuery,
      handle: ({ params, query, gateway }) => json(gateway.services.catalog.get(params.model, query.provider)),
    }),
    defineRoute({
      method: "GET",
      path: "/api/pricing",
      tag: "models",
      summary: "Compact pricing table of the bundled catalog.",
      handle: ({ gateway }) => {
        const catalog = gateway.services.catalog;
        const models = catalog.cards().map((c) => ({ modelId: c.modelId, provider: c.provider, pricing: c.pricing }));
        return json({ models, version: catalog.version });
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/models",
      tag: "models",
      summary: "Public catalog proxied from the configured models service; the native catalog when none is configured.",
      handle: async ({ request, gateway }) => {
        const service = gateway.services.modelsService;
        if (!service) {
          const data = gateway.services.catalog.cards();
          return json({ object: "list", data, total: data.length, source: "native" });
        }
        const body = await fetchModelsService(gateway.http, service, request.query, request.signal);
        return json(body, { headers: { "x-models-source": "upstream" } });
      },
    }),
  ];
}
