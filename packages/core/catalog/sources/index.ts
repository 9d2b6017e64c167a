/**
 * Every source of the bundled native catalog, one module per provider. scripts/build-catalog.ts
 * validates these cards and renders packages/core/src/catalog/generated/native-catalog.ts.
 */
import { cards as anthropic } from "./anthropic.js";
import { cards as bedrock } from "./bedrock.js";
import { cards as blackForestLabs } from "./black-forest-labs.js";
import { cards as cohere } from "./cohere.js";
import { cards as deepgram } from "./deepgram.js";
import { cards as elevenlabs } from "./elevenlabs.js";
import { cards as fal } from "./fal.js";
import { cards as google } from "./google.js";
import { cards as groq } from "./groq.js";
import { cards as luma } from "./luma.js";
import { cards as mistral } from "./mistral.js";
import { cards as openai } from "./openai.js";
import { cards as runway } from "./runway.js";
import { cards as stability } from "./stability.js";
import { cards as together } from "./together.js";
import type { CardInput } from "./types.js";
import { cards as voyage } from "./voyage.js";

export type { CardInput } from "./types.js";

/** All source cards, unvalidated and unsorted. */
export const SOURCE_CARDS: readonly CardInput[] = [
  ...openai,
  ...google,
  ...anthropic,
  ...mistral,
  ...cohere,
  ...voyage,
  ...blackForestLabs,
  ...stability,
  ...elevenlabs,
  ...deepgram,
  ...runway,
  ...luma,
  ...together,
  ...fal,
  ...bedrock,
  ...groq,
];
