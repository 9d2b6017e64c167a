/** Test helper: the audio files of packages/core/test-fixtures/audio (ten seconds of a tone each; see its README). */
import { readFileSync } from "node:fs";

/** The bytes of one fixture file, e.g. `tone-10s-16k.mp3`. */
export const audioFixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`../../test-fixtures/audio/${name}`, import.meta.url)));

/** `bytes` three times over: a file that plays three times as long as its first header declares. */
export const thrice = (bytes: Uint8Array): Uint8Array => new Uint8Array(Buffer.concat([bytes, bytes, bytes]));
