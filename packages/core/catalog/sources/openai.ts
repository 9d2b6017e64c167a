/**
 * OpenAI models.
 * Prices: https://openai.com/api/pricing/ and https://platform.openai.com/docs/pricing
 * (list prices as published, assumed current on 2026-11-21; standard tier, not batch/flex).
 * Deprecations: https://platform.openai.com/docs/deprecations
 */
import {
  arr, bool, chatParams, choice, embeddingCard, imageCard, imageGrid, int, num, perImage, perKChars, perAudioMinute, perMInputImageTokens, perMInputTokens,
  perVideoSecond, req, speechCard, str, textCard, transcriptionCard, videoCard, byParam, type CardInput, type Params,
} from "./types.js";

const P = "openai";

// --- images -----------------------------------------------------------------------------------

const GPT_IMAGE_SIZES = ["1024x1024", "1024x1536", "1536x1024", "auto"] as const;
const GPT_IMAGE_QUALITIES = ["low", "medium", "high", "auto"] as const;

/**
 * Per-image prices of a GPT Image model from its square and portrait/landscape price per quality
 * (its image output tokens), plus what OpenAI bills on top of them: the prompt's text input tokens
 * (`textInputPerM`) and an edit's input image tokens (`imageInputPerM`, `input_tokens_details.image_tokens`),
 * each per 1M tokens as listed under "Text tokens" / "Image tokens" → input on the model's page
 * (https://platform.openai.com/docs/models/gpt-image-1 and …/gpt-image-1-mini) and the pricing page.
 * "auto" is metered at the most expensive choice it can resolve to (high quality, non-square size).
 */
function gptImagePricing(prices: Record<"low" | "medium" | "high", [square: string, wide: string]>, textInputPerM: string, imageInputPerM: string) {
  const row = ([square, wide]: [string, string]) => ({ "1024x1024": square, "1024x1536": wide, "1536x1024": wide, auto: wide });
  return [
    ...imageGrid("quality", "size", {
      low: row(prices.low),
      medium: row(prices.medium),
      high: row(prices.high),
      auto: row(prices.high),
    }),
    perMInputTokens(textInputPerM),
    perMInputImageTokens(imageInputPerM),
  ];
}

function gptImageParams(fidelity: boolean): Params {
  return {
    size: choice(GPT_IMAGE_SIZES, "auto", "Output size; auto lets the model choose."),
    quality: choice(GPT_IMAGE_QUALITIES, "auto", "Rendering quality; higher quality costs more per image."),
    n: int("Number of images to generate.", { minimum: 1, maximum: 10, default: 1 }),
    background: choice(["transparent", "opaque", "auto"], "auto", "Background; transparent requires png or webp output."),
    output_format: choice(["png", "jpeg", "webp"], "png", "Encoding of the returned image."),
    output_compression: int("Compression level (0-100) for jpeg and webp output.", { minimum: 0, maximum: 100, default: 100 }),
    moderation: choice(["auto", "low"], "auto", "Content moderation strictness."),
    image: arr("Edits only: the input image(s) to edit."),
    mask: str("Edits only: a PNG mask whose transparent areas mark where to edit."),
    ...(fidelity ? { input_fidelity: choice(["low", "high"], "low", "Edits only: how closely to preserve details (faces, logos) of the input images.") } : {}),
  };
}

const DALLE_FORMAT = choice(["url", "b64_json"], "url", "Return a URL (valid for 60 minutes) or base64 data.");

const images: CardInput[] = [
  imageCard(P, {
    id: "gpt-image-1",
    name: "GPT Image 1",
    description: "OpenAI's natively multimodal image model for generation and edits, with strong instruction following and text rendering.",
    edit: true,
    pricing: gptImagePricing({ low: ["0.011", "0.016"], medium: ["0.042", "0.063"], high: ["0.167", "0.25"] }, "5", "10"),
    params: gptImageParams(true),
  }),
  imageCard(P, {
    id: "gpt-image-1-mini",
    name: "GPT Image 1 Mini",
    description: "A cheaper, faster GPT Image model for generation and edits where cost matters more than peak quality.",
    edit: true,
    pricing: gptImagePricing({ low: ["0.005", "0.006"], medium: ["0.011", "0.015"], high: ["0.036", "0.052"] }, "2", "2.5"),
    params: gptImageParams(false),
  }),
  imageCard(P, {
    id: "dall-e-3",
    name: "DALL·E 3",
    description: "OpenAI's previous-generation image model; one image per request in standard or HD quality, with vivid or natural style.",
    deprecated: true,
    pricing: imageGrid("quality", "size", {
      standard: { "1024x1024": "0.040", "1792x1024": "0.080", "1024x1792": "0.080" },
      hd: { "1024x1024": "0.080", "1792x1024": "0.120", "1024x1792": "0.120" },
    }),
    params: {
      size: choice(["1024x1024", "1792x1024", "1024x1792"], "1024x1024", "Output size."),
      quality: choice(["standard", "hd"], "standard", "hd gives finer detail and costs more."),
      style: choice(["vivid", "natural"], "vivid", "vivid leans hyper-real and dramatic; natural is more subdued."),
      n: int("Number of images; DALL·E 3 supports only 1.", { minimum: 1, maximum: 1, default: 1 }),
      response_format: DALLE_FORMAT,
    },
  }),
  imageCard(P, {
    id: "dall-e-2",
    name: "DALL·E 2",
    description: "OpenAI's legacy image model with generation and mask-based edits at small sizes.",
    deprecated: true,
    edit: true,
    pricing: byParam(perImage, "size", { "256x256": "0.016", "512x512": "0.018", "1024x1024": "0.020" }),
    params: {
      size: choice(["256x256", "512x512", "1024x1024"], "1024x1024", "Output size."),
      n: int("Number of images to generate.", { minimum: 1, maximum: 10, default: 1 }),
      response_format: DALLE_FORMAT,
      image: str("Edits only: the square PNG image to edit."),
      mask: str("Edits only: a PNG mask whose transparent areas mark where to edit."),
    },
  }),
];

// --- speech and transcription -------------------------------------------------------------------

const TTS_VOICES = ["alloy", "ash", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer"];
function ttsParams(voices: string[], extra: Params = {}): Params {
  return {
    voice: req(choice(voices, null, "The voice to speak with.")),
    response_format: choice(["mp3", "opus", "aac", "flac", "wav", "pcm"], "mp3", "Audio encoding of the result."),
    speed: num("Playback speed multiplier.", { minimum: 0.25, maximum: 4, default: 1 }),
    ...extra,
  };
}

function transcribeParams(formats: string[], extra: Params = {}): Params {
  return {
    language: str("ISO-639-1 code of the spoken language (e.g. en); improves accuracy and latency."),
    prompt: str("Text to guide style or continue a previous segment."),
    response_format: choice(formats, "json", "Format of the transcript."),
    temperature: num("Sampling temperature between 0 and 1.", { minimum: 0, maximum: 1, default: 0 }),
    ...extra,
  };
}

const audio: CardInput[] = [
  speechCard(P, {
    id: "tts-1",
    name: "TTS-1",
    description: "OpenAI text-to-speech optimized for low latency, priced per character of input.",
    pricing: [perKChars("0.015")],
    params: ttsParams(TTS_VOICES),
  }),
  speechCard(P, {
    id: "tts-1-hd",
    name: "TTS-1 HD",
    description: "OpenAI text-to-speech optimized for audio quality, priced per character of input.",
    pricing: [perKChars("0.030")],
    params: ttsParams(TTS_VOICES),
  }),
  speechCard(P, {
    id: "gpt-4o-mini-tts",
    name: "GPT-4o mini TTS",
    description: "Steerable text-to-speech: instructions control accent, emotion, tone and pacing; metered at OpenAI's estimated cost per minute of audio.",
    pricing: [perAudioMinute("0.015")],
    params: ttsParams([...TTS_VOICES, "ballad", "verse", "marin", "cedar"], {
      instructions: str("How the voice should sound (tone, emotion, accent, pacing)."),
      stream_format: choice(["audio", "sse"], "audio", "Stream raw audio or server-sent events."),
    }),
  }),
  transcriptionCard(P, {
    id: "whisper-1",
    name: "Whisper",
    description: "OpenAI's open-source-derived speech recognition model with subtitles output (srt, vtt) and word timestamps.",
    perMinute: "0.006",
    params: transcribeParams(["json", "text", "srt", "verbose_json", "vtt"], {
      timestamp_granularities: arr("With verbose_json: word and/or segment timestamps."),
    }),
  }),
  transcriptionCard(P, {
    id: "gpt-4o-transcribe",
    name: "GPT-4o Transcribe",
    description: "Speech-to-text built on GPT-4o with lower word error rates than Whisper across many languages.",
    perMinute: "0.006",
    promptPerM: "2.50",
    params: transcribeParams(["json", "text"], { stream: bool("Stream transcript deltas as server-sent events.", { default: false }) }),
  }),
  transcriptionCard(P, {
    id: "gpt-4o-mini-transcribe",
    name: "GPT-4o mini Transcribe",
    description: "Cheaper speech-to-text built on GPT-4o mini, for high-volume transcription.",
    perMinute: "0.003",
    promptPerM: "1.25",
    params: transcribeParams(["json", "text"], { stream: bool("Stream transcript deltas as server-sent events.", { default: false }) }),
  }),
];

// --- embeddings ------------------------------------------------------------------------------------

const ENCODING = choice(["float", "base64"], "float", "Return floats or base64-encoded float32 values.");
const embeddings: CardInput[] = [
  embeddingCard(P, {
    id: "text-embedding-3-small",
    name: "text-embedding-3-small",
    description: "Small, efficient third-generation OpenAI embedding model (1536 dimensions, shortenable).",
    context: 8191,
    price: "0.02",
    params: { dimensions: int("Shorten the embedding to this many dimensions.", { minimum: 1, maximum: 1536, default: 1536 }), encoding_format: ENCODING },
  }),
  embeddingCard(P, {
    id: "text-embedding-3-large",
    name: "text-embedding-3-large",
    description: "Most capable OpenAI embedding model for English and non-English text (3072 dimensions, shortenable).",
    context: 8191,
    price: "0.13",
    params: { dimensions: int("Shorten the embedding to this many dimensions.", { minimum: 1, maximum: 3072, default: 3072 }), encoding_format: ENCODING },
  }),
  embeddingCard(P, {
    id: "text-embedding-ada-002",
    name: "text-embedding-ada-002",
    description: "Second-generation OpenAI embedding model (1536 fixed dimensions), superseded by text-embedding-3.",
    context: 8191,
    price: "0.10",
    deprecated: true,
    params: { encoding_format: ENCODING },
  }),
];

// --- video -----------------------------------------------------------------------------------------

function soraParams(sizes: string[]): Params {
  return {
    seconds: choice(["4", "8", "12"], "4", "Clip length in seconds."),
    size: choice(sizes, "720x1280", "Output resolution, width x height."),
    input_reference: str("Optional image used as the first frame."),
  };
}
const video: CardInput[] = [
  videoCard(P, {
    id: "sora-2",
    name: "Sora 2",
    description: "OpenAI's video model with synchronized audio, tuned for speed and everyday clips at 720p.",
    imageInput: true,
    pricing: [perVideoSecond("0.10")],
    params: soraParams(["720x1280", "1280x720"]),
  }),
  videoCard(P, {
    id: "sora-2-pro",
    name: "Sora 2 Pro",
    description: "Higher-fidelity Sora 2 for production footage, at 720p or 1024p.",
    imageInput: true,
    pricing: byParam(perVideoSecond, "size", { "720x1280": "0.30", "1280x720": "0.30", "1024x1792": "0.50", "1792x1024": "0.50" }),
    params: soraParams(["720x1280", "1280x720", "1024x1792", "1792x1024"]),
  }),
];

// --- text ------------------------------------------------------------------------------------------

const GPT5_EFFORT = ["minimal", "low", "medium", "high"];
const O_EFFORT = ["low", "medium", "high"];
/**
 * The most input tokens one image costs on each model (OpenAI's "Images and vision" guide). Tile
 * models: base + per-tile tokens × 8 tiles, the most a high-detail image has once scaled into
 * 2048×2048 with its short side at 768 (4 × 2 tiles of 512). Patch models: the 1,536 32-px patches
 * an image is capped at × the model's multiplier, rounded up.
 */
const IMAGE_TOKENS: Record<string, number> = {
  "gpt-5": 70 + 8 * 140,
  "gpt-5-mini": Math.ceil(1536 * 1.62),
  "gpt-5-nano": Math.ceil(1536 * 2.46),
  "gpt-4.1": 85 + 8 * 170,
  "gpt-4.1-mini": Math.ceil(1536 * 1.62),
  "gpt-4.1-nano": Math.ceil(1536 * 2.46),
  "gpt-4o": 85 + 8 * 170,
  "gpt-4o-mini": 2833 + 8 * 5667,
  o3: 75 + 8 * 150,
  "o4-mini": Math.ceil(1536 * 1.72),
};
const chat = (id: string, name: string, description: string, context: number, maxOut: number, [input, cached, output]: [string, string, string], reasoning?: string[]) =>
  textCard(P, {
    id, name, description, context, input, cached, output,
    vision: true,
    imageTokens: IMAGE_TOKENS[id]!,
    tokenizer: "o200k_base",
    params: chatParams({ maxTokens: maxOut, ...(reasoning ? { reasoning } : {}) }),
  });

const text: CardInput[] = [
  chat("gpt-5", "GPT-5", "OpenAI's flagship reasoning model for coding and agentic tasks.", 400000, 128000, ["1.25", "0.125", "10.00"], GPT5_EFFORT),
  chat("gpt-5-mini", "GPT-5 mini", "A faster, cheaper GPT-5 for well-defined tasks.", 400000, 128000, ["0.25", "0.025", "2.00"], GPT5_EFFORT),
  chat("gpt-5-nano", "GPT-5 nano", "The fastest, cheapest GPT-5, for summarization and classification.", 400000, 128000, ["0.05", "0.005", "0.40"], GPT5_EFFORT),
  chat("gpt-4.1", "GPT-4.1", "Non-reasoning GPT model with a 1M-token context, strong at instruction following and tool calls.", 1047576, 32768, ["2.00", "0.50", "8.00"]),
  chat("gpt-4.1-mini", "GPT-4.1 mini", "Smaller GPT-4.1 balancing intelligence, speed and cost, with a 1M-token context.", 1047576, 32768, ["0.40", "0.10", "1.60"]),
  chat("gpt-4.1-nano", "GPT-4.1 nano", "The fastest, cheapest GPT-4.1, for classification and autocompletion.", 1047576, 32768, ["0.10", "0.025", "0.40"]),
  chat("gpt-4o", "GPT-4o", "OpenAI's versatile multimodal GPT model accepting text and image input.", 128000, 16384, ["2.50", "1.25", "10.00"]),
  chat("gpt-4o-mini", "GPT-4o mini", "Small, affordable GPT-4o for focused tasks and fine-tuning.", 128000, 16384, ["0.15", "0.075", "0.60"]),
  chat("o3", "o3", "OpenAI reasoning model for complex math, science, coding and visual reasoning.", 200000, 100000, ["2.00", "0.50", "8.00"], O_EFFORT),
  chat("o4-mini", "o4-mini", "Fast, cost-efficient OpenAI reasoning model, strong at math, coding and visual tasks.", 200000, 100000, ["1.10", "0.275", "4.40"], O_EFFORT),
];

export const cards = [...images, ...audio, ...embeddings, ...video, ...text] satisfies CardInput[];
