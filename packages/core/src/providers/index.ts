/** The provider layer: ports, the registry, the local and OpenAI-compatible providers, multipart and media codecs. */
export type {
  ChatCompletionResult,
  ChatRequest,
  ChatStreamChunk,
  ChatUsage,
  EmbeddingsRequest,
  EmbeddingsResult,
  ImageDatum,
  ImageEditRequest,
  ImageGenerationRequest,
  ImageResult,
  ImageUsage,
  InferenceProvider,
  ProviderRegistry,
  SpeechFormat,
  SpeechRequest,
  SpeechResult,
  TranscriptionRequest,
  TranscriptionResult,
  TranscriptSegment,
  VideoCreateRequest,
  VideoCreateResult,
  VideoJobState,
  VideoProvider,
  VideoStatus,
} from "./types.js";
export { createProviderRegistry, type RegisteredProvider } from "./registry.js";
export {
  createLocalProvider,
  LOCAL_EMBEDDING_DIMENSIONS,
  LOCAL_MAX_IMAGE_SIDE,
  LOCAL_MAX_SPEECH_MS,
  LOCAL_MS_PER_CHARACTER,
  LOCAL_SAMPLE_RATE,
  LOCAL_TEXT_CHUNK,
  type LocalProviderOptions,
} from "./local.js";
export { createOpenAICompatibleProvider, sniffImageMime, type OpenAICompatibleProviderOptions } from "./openai-compatible.js";
export { encodeMultipart, parseMultipart, MAX_MULTIPART_PARTS, type MultipartFile, type MultipartForm } from "./multipart.js";
export { encodePng, parseSize, zlibStored } from "./png.js";
export { audioSeconds, encodeWav, ESTIMATE_BITS_PER_SECOND, parseWav, pcmBytes, type RiffChunk, type WavInfo } from "./wav.js";
export { audioSecondsBound, MIN_AUDIO_BITS_PER_SECOND } from "./audio-length.js";
export { adler32, base64ToFloat32, crc32, float32ToBase64, fnv1a } from "./bytes.js";
