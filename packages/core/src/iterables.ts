/** Async-iterable helpers (the streamed bodies of SSE frames and relayed files). */

/**
 * The frames of a stream, then `done()` once however the stream ends: finished, failed, or left by
 * the client (`return()`, forwarded to the stream even before its first frame, which a generator
 * wrapper would not do).
 */
export function endingWith<T>(frames: AsyncIterable<T>, done: () => void): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const inner = frames[Symbol.asyncIterator]();
      let open = true;
      const end = () => {
        if (!open) return;
        open = false;
        done();
      };
      return {
        async next() {
          try {
            const r = await inner.next();
            if (r.done) end();
            return r;
          } catch (error) {
            end();
            throw error;
          }
        },
        async return(value?: unknown) {
          try {
            return (await inner.return?.(value)) ?? { done: true, value: undefined };
          } finally {
            end();
          }
        },
      };
    },
  };
}

/** One value (awaited) as an async iterable: a body read whole, sent as one chunk. */
export async function* once<T>(value: T | Promise<T>): AsyncGenerator<T> {
  yield await value;
}
