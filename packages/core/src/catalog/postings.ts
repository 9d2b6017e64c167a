/** Sorted position lists (posting lists) and the set operations the catalog index needs. */

/** Intersects two ascending position lists. Gallops (binary search) when one is much smaller. */
export function intersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length > b.length) [a, b] = [b, a];
  const out = new Uint32Array(a.length);
  let n = 0;
  if (a.length * 16 < b.length) {
    let lo = 0;
    for (const x of a) {
      lo = lowerBound(b, x, lo);
      if (lo >= b.length) break;
      if (b[lo] === x) out[n++] = x;
    }
  } else {
    let i = 0;
    let j = 0;
    while (i < a.length && j < b.length) {
      const x = a[i]!;
      const y = b[j]!;
      if (x === y) {
        out[n++] = x;
        i++;
        j++;
      } else if (x < y) i++;
      else j++;
    }
  }
  return out.subarray(0, n);
}

/** First index in ascending `list` (from `from`) whose value is >= `value`. */
export function lowerBound(list: ArrayLike<number>, value: number, from = 0): number {
  let lo = from;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Collects positions per key, then freezes them into ascending Uint32Arrays. */
export class PostingBuilder {
  private readonly lists = new Map<string, number[]>();

  /** Adds `position` under `key`. Positions must be added in ascending order per key. */
  add(key: string, position: number): void {
    const list = this.lists.get(key);
    if (list === undefined) this.lists.set(key, [position]);
    else if (list[list.length - 1] !== position) list.push(position);
  }

  build(): Map<string, Uint32Array> {
    const out = new Map<string, Uint32Array>();
    for (const [k, v] of this.lists) out.set(k, Uint32Array.from(v));
    return out;
  }
}
