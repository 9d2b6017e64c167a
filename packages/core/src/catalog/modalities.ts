/**
 * The modality catalog of `GET /v1/modalities` (SDK `ModalityListResponse`): every canonical
 * modality with its canonical operations, how many cards serve each, and the price units that
 * bill them. Derived from the cards; computed once per catalog.
 */
import { MODALITIES, OPERATIONS, PRICE_UNITS, type Modality, type ModelCard, type PriceUnit } from "./card.js";
import { PRICE_UNIT_HEADERS, entryId, linesFor, type CardSource, type PricingUnitView } from "./card-view.js";
import type { Catalog } from "./catalog.js";

/** One operation of a modality across the catalog (SDK `OperationCatalogEntry`). */
export interface OperationCatalogEntry {
  readonly operation: string;
  /** Cards serving the operation. */
  readonly modelCount: number;
  /** Catalogs the counted cards come from (`["native"]`; empty when no card serves it). */
  readonly sourceTypes: readonly CardSource[];
  readonly pricingUnits: readonly PricingUnitView[];
}

/** One modality across the catalog (SDK `ModalityCatalogEntry`). */
export interface ModalityCatalogEntry {
  readonly modality: Modality;
  readonly operations: readonly OperationCatalogEntry[];
  /** Cards with at least one operation of the modality. */
  readonly modelCount: number;
  readonly pricingUnits: readonly PricingUnitView[];
}

/** The body of `GET /v1/modalities`. */
export interface ModalityList {
  readonly object: "list";
  readonly data: readonly ModalityCatalogEntry[];
}

/** Per-unit accumulation: lowest price per entry id, price keys in first-seen order, card count. */
interface UnitAcc {
  readonly entries: Map<string, number>;
  readonly keys: string[];
  cards: number;
}

class UnitsAcc {
  private readonly units = new Map<PriceUnit, UnitAcc>();

  add(card: ModelCard, modality: Modality): void {
    const seen = new Set<PriceUnit>();
    for (const line of linesFor(card, modality)) {
      let acc = this.units.get(line.unit);
      if (!acc) this.units.set(line.unit, (acc = { entries: new Map(), keys: [], cards: 0 }));
      const id = entryId(line);
      const price = Number(line.unitPriceUsd);
      const was = acc.entries.get(id);
      if (was === undefined || price < was) acc.entries.set(id, price);
      if (!acc.keys.includes(line.key)) acc.keys.push(line.key);
      if (!seen.has(line.unit)) acc.cards++;
      seen.add(line.unit);
    }
  }

  /** Units ordered by how many cards use them (ties: PRICE_UNITS order); the most used is the default. */
  view(): PricingUnitView[] {
    const order = Object.keys(PRICE_UNITS);
    return [...this.units]
      .sort(([a, x], [b, y]) => y.cards - x.cards || order.indexOf(a) - order.indexOf(b))
      .map(([unit, acc], i) => ({
        unitKey: unit,
        unit: PRICE_UNITS[unit].quantity,
        header: PRICE_UNIT_HEADERS[unit],
        entries: Object.fromEntries([...acc.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
        valueKeys: acc.keys,
        default: i === 0,
      }));
  }
}

/**
 * Builds the modality catalog of `cards`: all of {@link MODALITIES} in order, each with all of its
 * canonical {@link OPERATIONS} (a modality or operation no card serves has `modelCount: 0`). At this
 * level a pricing unit's `entries` hold the lowest price of each entry id across the counted cards
 * (a "from" price), and the unit used by the most cards is the `default`.
 */
export function buildModalityList(cards: readonly ModelCard[], source: CardSource = "native"): ModalityList {
  const data = MODALITIES.map((modality): ModalityCatalogEntry => {
    const modalityUnits = new UnitsAcc();
    let modelCount = 0;
    const operations = (OPERATIONS[modality] as readonly string[]).map((operation): OperationCatalogEntry => {
      const units = new UnitsAcc();
      let count = 0;
      for (const card of cards) {
        if (!card.operations.some((o) => o.modality === modality && o.operation === operation)) continue;
        count++;
        units.add(card, modality);
      }
      return { operation, modelCount: count, sourceTypes: count > 0 ? [source] : [], pricingUnits: units.view() };
    });
    for (const card of cards) {
      if (!card.operations.some((o) => o.modality === modality)) continue;
      modelCount++;
      modalityUnits.add(card, modality);
    }
    return { modality, operations, modelCount, pricingUnits: modalityUnits.view() };
  });
  return { object: "list", data };
}

const lists = new WeakMap<Catalog, ModalityList>();

/** {@link buildModalityList} of a catalog's cards, memoised per catalog. */
export function modalityList(catalog: Catalog, source: CardSource = "native"): ModalityList {
  let list = lists.get(catalog);
  if (!list) lists.set(catalog, (list = buildModalityList(catalog.cards(), source)));
  return list;
}
