/** The routes of the model catalog (docs/catalog.md). All public. */
import { z } from "zod";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { json } from "../http/respond.js";
import { clampedInt, optionalText } from "../http/schemas.js";
import { parseWith } from "../validation.js";
import type { ModelCard } from "./card.js";
import { cardView, type CardSource } from "./card-view.js";
import type { CatalogPage } from "./catalog.js";
import { modalityList } from "./modalities.js";
import { fetchModelsService } from "./models-service.js";

const filters = z.object({
  q: optionalText(200),
  provider: optionalText(64),
  modality: optionalText(32),
  operation: optionalText(32),
  limit: clampedInt(50, 1, 200),
  cursor: optionalText(2000),
});

/**
 * The filters of `/api/models` as documented; never rejects, since the query is passed on as it is
 * to a models service. Without one, the query is parsed with the strict {@link filters}, except
 * that a missing `limit` serves every match (the route served the whole catalog before it paged).
 */
const proxyQuery = z.object({
  q: z.string().optional(),
  provider: z.string().optional(),
  modality: z.string().optional(),
  operation: z.string().optional(),
  limit: z.string().optional().meta({ description: "1..200; without it (and without a models service) every match is served" }),
  cursor: z.string().optional(),
});

/** A catalog page with each card in its wire view (OpenAI's `id`/`object`/`created`/`owned_by`, `type`, enriched `operations`). */
export function pageView(page: CatalogPage, source: CardSource = "native") {
  return Object.assign({}, page, { data: page.data.map((card) => cardView(card, source)) });
}

const modelParams = z.object({ model: z.string().min(1).max(200) });
const providerQuery = z.object({ provider: optionalText(64) });

/** The parameter metadata view of a card (`/v1/models/{model}/params`). */
export function paramsView(card: ModelCard) {
  const params = card.params ?? {};
  const defaults: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(params)) if (spec.default !== undefined) defaults[name] = spec.default;
  const modality = card.operations[0]!.modality;
  // `type` is what the origin's client (`ModelParamsResponse`) reads; `modality` is kept for ours.
  return { modelId: card.modelId, provider: card.provider, modality, type: modality, params, defaults };
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
      handle: ({ query, gateway }) => json(pageView(gateway.services.catalog.search(query))),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/models/search",
      tag: "models",
      summary: "Search the native catalog; filters in the JSON body, the query string as fallback.",
      body: filters,
      bodyFromQuery: true,
      handle: ({ body, gateway }) => json(pageView(gateway.services.catalog.search(body))),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/models/all",
      tag: "models",
      summary: "List the extended catalog when configured, else the native one (same filters).",
      query: filters,
      handle: ({ query, gateway }) => {
        const { catalog, extendedCatalog } = gateway.services;
        return json(pageView(extendedCatalog.search(query), extendedCatalog === catalog ? "native" : "extended"));
      },
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
      handle: ({ params, query, gateway }) => json(cardView(gateway.services.catalog.get(params.model, query.provider))),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/modalities",
      tag: "models",
      summary: "The modalities of the native catalog with their operations, model counts and pricing units.",
      handle: ({ gateway }) => json(modalityList(gateway.services.catalog)),
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
      summary: "Public catalog proxied from the configured models service (query passed on); without one the native catalog with the /v1/models filters (every match when limit is absent).",
      query: proxyQuery,
      handle: async ({ request, gateway }) => {
        const service = gateway.services.modelsService;
        if (!service) {
          const catalog = gateway.services.catalog;
          const raw: Record<string, string> = {};
          for (const [k, v] of request.query) if (!(k in raw)) raw[k] = v;
          const search = parseWith(filters, raw, "query");
          if (raw.limit === undefined) search.limit = Math.max(1, catalog.size);
          return json(Object.assign(pageView(catalog.search(search)), { source: "native" }));
        }
        const body = await fetchModelsService(gateway.http, service, request.query, request.signal);
        return json(body, { headers: { "x-models-source": "upstream" } });
      },
    }),
  ];
}
