/**
 * `@tollgate/core/internals`: helpers the gateway uses inside and that `@tollgate/testing`'s
 * stubs reuse so the test doubles encode exactly as the gateway does. Not part of the public API:
 * names and signatures may change in any release.
 */
export { bytesToBase64, fromBase64Url } from "./encoding.js";
export { cardView } from "./catalog/card-view.js";
export { encodeMultipart } from "./providers/multipart.js";
export { encodeWav } from "./providers/wav.js";
export type { Sleep } from "./video/options.js";
