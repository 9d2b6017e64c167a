/** Request inputs shared by the media routes: files as base64 / data URLs / multipart parts, and their schemas. */
import { z } from "zod";
import { base64ToBytes } from "../encoding.js";
import { invalidRequest } from "../errors.js";
import type { MultipartFile } from "../providers/multipart.js";

/** A decoded input file. */
export interface InputFile {
  readonly data: Uint8Array;
  readonly contentType?: string;
  readonly filename?: string;
}

const multipartFile = z.custom<MultipartFile>((v) => typeof v === "object" && v !== null && (v as MultipartFile).data instanceof Uint8Array, "must be a file");

/** A file field: a base64 string, a `data:<mime>;base64,…` URL, or a multipart file part. */
export const fileInput = z.union([z.string().min(1, "must not be empty"), multipartFile]);

/** Decodes a {@link fileInput} value; a malformed base64 / data URL is a 400 naming `param`. */
export function decodeFile(value: z.output<typeof fileInput>, param: string): InputFile {
  if (typeof value !== "string") return value;
  const m = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(value);
  if (m && !m[2]) throw invalidRequest(`${param} must be base64 (a data URL needs ;base64)`, param);
  const bytes = base64ToBytes(m ? m[3]! : value);
  if (!bytes || bytes.length === 0) throw invalidRequest(`${param} must be base64-encoded file content or a data URL`, param);
  return m?.[1] ? { data: bytes, contentType: m[1] } : { data: bytes };
}

/** A positive integer given as a number or digits (multipart fields are strings). */
export function intInput(min: number, max: number) {
  return z.union([z.number().int(), z.string().regex(/^\d+$/, "must be an integer").transform(Number)]).pipe(z.number().int().min(min).max(max));
}

/** A number given as a number or a decimal string. */
export function numberInput(min: number, max: number) {
  return z.union([z.number(), z.string().regex(/^\d+(\.\d+)?$/, "must be a number").transform(Number)]).pipe(z.number().min(min).max(max));
}

/** The fields every media route takes. */
export const modelFields = {
  model: z.string().trim().min(1, "is required").max(200),
  /** Selects a provider for a public id served by several. */
  provider: z.string().trim().min(1).max(64).optional(),
};
