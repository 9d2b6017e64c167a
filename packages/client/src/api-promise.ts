/** The promise every call returns: awaiting it gives the body; `.withResponse()` gives the body and its metadata. */
import type { ResponseMeta, WithMeta } from "./http/meta.js";

/**
 * A `Promise<T>` of a call's body (the request starts at once) with one extra method,
 * {@link APIPromise.withResponse}, for the metadata of the answer: request id, the key's budget
 * as bigints, the receipt of a paid call, the payment intent id, replay and x402 headers.
 *
 * ```ts
 * const key = await client.keys.get(keyId);
 * const { data, meta } = await client.payments.prepare(body).withResponse();
 * meta.budget?.remaining; // bigint
 * ```
 */
export class APIPromise<T> implements Promise<T> {
  readonly [Symbol.toStringTag] = "APIPromise";
  readonly #response: Promise<WithMeta<T>>;
  #data: Promise<T> | undefined;

  /** Wraps a promise of `{data, meta}`. */
  constructor(response: Promise<WithMeta<T>>) {
    this.#response = response;
  }

  /** The body and the metadata of the answer. Rejects like the call. */
  withResponse(): Promise<WithMeta<T>> {
    return this.#response;
  }

  /** The metadata only. */
  meta(): Promise<ResponseMeta> {
    return this.#response.then((r) => r.meta);
  }

  #body(): Promise<T> {
    return (this.#data ??= this.#response.then((r) => r.data));
  }

  then<A = T, B = never>(onFulfilled?: ((value: T) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.#body().then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#body().catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.#body().finally(onFinally);
  }

  /** An APIPromise of `promise` whose body is mapped by `fn` (metadata unchanged). */
  static map<A, B>(promise: Promise<WithMeta<A>>, fn: (data: A, meta: ResponseMeta) => B): APIPromise<B> {
    return new APIPromise(promise.then((r) => ({ data: fn(r.data, r.meta), meta: r.meta })));
  }
}
