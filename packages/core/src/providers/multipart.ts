/**
 * multipart/form-data (RFC 7578) as bytes, with no `node:` imports: the encoder builds upstream
 * uploads (image edits, transcriptions); the parser reads the uploads the OpenAI SDK sends to
 * `/v1/audio/transcriptions` and `/v1/images/edits`. Binary-safe in both directions.
 */
import { invalidRequest } from "../errors.js";
import { concatBytes, indexOfBytes, kmpTable, utf8Bytes } from "./bytes.js";

/** One file part. */
export interface MultipartFile {
  filename?: string;
  contentType?: string;
  data: Uint8Array;
}

/** A parsed multipart body: text fields and file parts by name. */
export interface MultipartForm {
  fields: Record<string, string>;
  files: Record<string, MultipartFile>;
  /** File parts whose name ends in `[]` (`image[]`, as the OpenAI SDK sends an array), every one in order; present only when there are some. */
  fileLists?: Record<string, MultipartFile[]>;
}

/** Most parts a body may have before the parser refuses it. */
export const MAX_MULTIPART_PARTS = 1000;

const CRLF = utf8Bytes("\r\n");

/**
 * Encodes text fields and files as multipart/form-data. The boundary is random and checked not to
 * occur in any value. Names and filenames escape `"`, CR and LF as `%22`, `%0D`, `%0A` (the HTML
 * form encoding); files without a `filename` are sent as `blob` (as `FormData` does, so every file
 * part parses as a file) and without a `contentType` as `application/octet-stream`. A name given
 * an array of files gets one part per file, in order, under that same name. Answers the body and
 * the `Content-Type` header value (with its boundary).
 */
export function encodeMultipart(
  fields: Readonly<Record<string, string>>,
  files: Readonly<Record<string, MultipartFile | readonly MultipartFile[]>> = {},
): { body: Uint8Array; contentType: string } {
  const fileParts = Object.entries(files).flatMap(([name, f]) => (Array.isArray(f) ? f : [f]).map((file: MultipartFile) => [name, file] as const));
  const values = [...Object.values(fields).map(utf8Bytes), ...fileParts.map(([, f]) => f.data)];
  let boundary: string;
  let marker: Uint8Array;
  do {
    boundary = `----tollgate${randomToken()}`;
    marker = utf8Bytes(`--${boundary}`);
  } while (values.some((v) => indexOfBytes(v, marker) >= 0));

  const parts: Uint8Array[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(utf8Bytes(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(name)}"\r\n\r\n`), utf8Bytes(value), CRLF);
  }
  for (const [name, file] of fileParts) {
    const filename = `; filename="${escapeName(file.filename ?? "blob")}"`;
    const type = (file.contentType ?? "application/octet-stream").replace(/[\r\n]/g, "");
    parts.push(
      utf8Bytes(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(name)}"${filename}\r\nContent-Type: ${type}\r\n\r\n`),
      file.data,
      CRLF,
    );
  }
  parts.push(utf8Bytes(`--${boundary}--\r\n`));
  return { body: concatBytes(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * Parses a multipart/form-data body. Parts with a `filename` parameter (even an empty one) are
 * files, the others are UTF-8 text fields; when a name repeats, the FIRST part wins, except for
 * files named `…[]`, which are all kept, in order, in `fileLists` (how the OpenAI SDK and curl send
 * several images to `/v1/images/edits`). The preamble and epilogue are ignored. File `data` are
 * views into `body` (no copy).
 * Throws 400 `invalid_request` when `contentType` is not multipart/form-data or lacks a boundary,
 * and when the body is malformed: no opening boundary, a part without a blank line after its
 * headers or without a `Content-Disposition: form-data; name=…`, no closing boundary, or more than
 * {@link MAX_MULTIPART_PARTS} parts.
 */
export function parseMultipart(body: Uint8Array, contentType: string): MultipartForm {
  const boundary = boundaryOf(contentType);
  const dash = utf8Bytes(`--${boundary}`);
  const delimiter = utf8Bytes(`\r\n--${boundary}`);
  const delimiterTable = kmpTable(delimiter);
  const headerEnd = utf8Bytes("\r\n\r\n");
  const headerEndTable = kmpTable(headerEnd);
  const form: MultipartForm = { fields: {}, files: {} };

  let pos: number;
  if (startsWith(body, dash, 0)) pos = 0;
  else {
    const found = indexOfBytes(body, delimiter, 0, delimiterTable);
    if (found < 0) throw malformed("the opening boundary is missing");
    pos = found + 2;
  }
  for (let count = 0; ; count++) {
    let at = pos + dash.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return form; // "--": the closing boundary
    if (count >= MAX_MULTIPART_PARTS) throw malformed(`more than ${MAX_MULTIPART_PARTS} parts`);
    while (body[at] === 0x20 || body[at] === 0x09) at++; // transport padding
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a) throw malformed("a boundary is not followed by CRLF");
    at += 2;
    let contentStart: number;
    let headers: string;
    if (body[at] === 0x0d && body[at + 1] === 0x0a) {
      headers = "";
      contentStart = at + 2;
    } else {
      const end = indexOfBytes(body, headerEnd, at, headerEndTable);
      if (end < 0) throw malformed("a part's headers do not end with a blank line");
      headers = new TextDecoder().decode(body.subarray(at, end));
      contentStart = end + 4;
    }
    const next = indexOfBytes(body, delimiter, contentStart, delimiterTable);
    if (next < 0) throw malformed("the closing boundary is missing");
    addPart(form, headers, body.subarray(contentStart, next));
    pos = next + 2;
  }
}

function addPart(form: MultipartForm, headerText: string, data: Uint8Array): void {
  let disposition: string | undefined;
  let partType: string | undefined;
  for (const line of headerText.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-disposition") disposition = value;
    else if (name === "content-type") partType = value;
  }
  if (!disposition || !/^form-data\s*(;|$)/i.test(disposition)) throw malformed("a part lacks Content-Disposition: form-data");
  const params = headerParams(disposition);
  const name = params.get("name");
  if (name === undefined) throw malformed("a part has no name");
  const filename = params.get("filename*") ?? params.get("filename");
  if (filename !== undefined) {
    const file: MultipartFile = Object.assign(filename === "" ? {} : { filename }, partType ? { contentType: partType } : undefined, { data });
    // A `[]` name is never `__proto__`: plain objects hold these lists safely.
    if (name.endsWith("[]")) ((form.fileLists ??= {})[name] ??= []).push(file);
    else if (!Object.hasOwn(form.files, name)) form.files[name] = file;
  } else if (!Object.hasOwn(form.fields, name)) {
    form.fields[name] = new TextDecoder().decode(data);
  }
}

/** `key=value` / `key="quoted"` / RFC 5987 `key*=UTF-8''pct` parameters after the first `;`. */
function headerParams(value: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    const key = m[1]!.toLowerCase();
    let v = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!.trim();
    if (key.endsWith("*")) {
      const ext = /^([^']*)'[^']*'(.*)$/.exec(v);
      if (!ext) continue;
      try {
        v = decodeURIComponent(ext[2]!);
      } catch {
        continue;
      }
    } else {
      v = v.replace(/%22/g, '"').replace(/%0D/gi, "\r").replace(/%0A/gi, "\n");
    }
    if (!out.has(key)) out.set(key, v);
  }
  return out;
}

function boundaryOf(contentType: string): string {
  if (!/^\s*multipart\/form-data\s*(;|$)/i.test(contentType)) {
    throw invalidRequest("the body must be multipart/form-data", undefined, { contentType: contentType.slice(0, 100) });
  }
  const boundary = headerParams(contentType).get("boundary");
  if (!boundary || boundary.length > 70) throw invalidRequest("the multipart/form-data Content-Type has no valid boundary");
  return boundary;
}

function startsWith(body: Uint8Array, prefix: Uint8Array, at: number): boolean {
  if (at + prefix.length > body.length) return false;
  for (let i = 0; i < prefix.length; i++) if (body[at + i] !== prefix[i]) return false;
  return true;
}

function malformed(why: string) {
  return invalidRequest(`malformed multipart/form-data body: ${why}`);
}

function escapeName(name: string): string {
  return name.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

function randomToken(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
