import http from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI, { toFile } from "openai";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { encodeMultipart, parseMultipart } from "./multipart.js";

const enc = new TextEncoder();
const allBytes = Uint8Array.from({ length: 1024 }, (_, i) => (i * 7) & 0xff);
// Bytes that look like multipart syntax inside a file must survive.
const tricky = enc.encode('\r\n--\r\n\r\n--notTheBoundary--\r\nContent-Disposition: form-data; name="x"\r\n\r\n');

function expect400(f: () => unknown): GatewayError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(GatewayError);
  expect((caught as GatewayError).status).toBe(400);
  expect((caught as GatewayError).code).toBe("invalid_request");
  return caught as GatewayError;
}

describe("multipart/form-data", () => {
  it("round-trips text fields and binary files", () => {
    const { body, contentType } = encodeMultipart(
      { model: "whisper-1", prompt: "Grüße 🌍\r\nline two", empty: "" },
      {
        file: { filename: 'a "quoted".wav', contentType: "audio/wav", data: allBytes },
        blob: { data: tricky },
        none: { filename: "zero.bin", data: new Uint8Array(0) },
      },
    );
    expect(contentType).toMatch(/^multipart\/form-data; boundary=----tollgate[0-9a-f]{24}$/);
    const form = parseMultipart(body, contentType);
    expect(form.fields).toEqual({ model: "whisper-1", prompt: "Grüße 🌍\r\nline two", empty: "" });
    expect(form.files.file!.filename).toBe('a "quoted".wav');
    expect(form.files.file!.contentType).toBe("audio/wav");
    expect([...form.files.file!.data]).toEqual([...allBytes]);
    expect(form.files.blob).toEqual({ filename: "blob", contentType: "application/octet-stream", data: tricky });
    expect(form.files.none!.data.length).toBe(0);
  });

  it("encodes bodies a standard parser (undici's Response.formData) reads", async () => {
    const { body, contentType } = encodeMultipart({ model: "m" }, { file: { filename: "x.bin", contentType: "application/octet-stream", data: allBytes } });
    const form = await new Response(body as BodyInit, { headers: { "content-type": contentType } }).formData();
    expect(form.get("model")).toBe("m");
    const file = form.get("file") as File;
    expect(file.name).toBe("x.bin");
    expect([...new Uint8Array(await file.arrayBuffer())]).toEqual([...allBytes]);
  });

  it("parses bodies a standard encoder (FormData, as the OpenAI SDK sends) writes", async () => {
    const fd = new FormData();
    fd.append("model", "gpt-image-1");
    fd.append("prompt", "add a hat");
    fd.append("image", new Blob([allBytes], { type: "image/png" }), "cat.png");
    const res = new Response(fd);
    const form = parseMultipart(new Uint8Array(await res.arrayBuffer()), res.headers.get("content-type")!);
    expect(form.fields).toEqual({ model: "gpt-image-1", prompt: "add a hat" });
    expect(form.files.image!.filename).toBe("cat.png");
    expect(form.files.image!.contentType).toBe("image/png");
    expect([...form.files.image!.data]).toEqual([...allBytes]);
  });

  it("parses the uploads of the OpenAI SDK (transcriptions and image edits)", async () => {
    const forms: { url: string; form: ReturnType<typeof parseMultipart> }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        forms.push({ url: req.url!, form: parseMultipart(new Uint8Array(Buffer.concat(chunks)), req.headers["content-type"]!) });
        const body = req.url === "/v1/audio/transcriptions" ? { text: "ok" } : { created: 1, data: [{ b64_json: "aA==" }] };
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const client = new OpenAI({ apiKey: "svc-test", baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxRetries: 0 });
      await client.audio.transcriptions.create({ model: "whisper-1", file: await toFile(allBytes, "clip.wav", { type: "audio/wav" }), language: "en" });
      await client.images.edit({ model: "gpt-image-1", prompt: "add a hat", image: await toFile(tricky, "cat.png", { type: "image/png" }) });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    expect(forms[0]!.form.fields).toMatchObject({ model: "whisper-1", language: "en" });
    expect(forms[0]!.form.files.file).toEqual({ filename: "clip.wav", contentType: "audio/wav", data: allBytes });
    expect(forms[1]!.form.fields).toMatchObject({ model: "gpt-image-1", prompt: "add a hat" });
    expect(forms[1]!.form.files.image!.data).toEqual(tricky);
  });

  it("accepts a quoted boundary, a preamble and an epilogue; the first of a repeated name wins", () => {
    const body = enc.encode(
      'preamble\r\n--b"x\r\nContent-Disposition: form-data; name="a"\r\n\r\none\r\n--b"x\r\ncontent-disposition: FORM-DATA; name=a\r\n\r\ntwo\r\n--b"x--\r\nepilogue',
    );
    expect(parseMultipart(body, 'multipart/form-data; boundary="b\\"x"').fields).toEqual({ a: "one" });
    expect(parseMultipart(enc.encode("--b--"), "multipart/form-data; boundary=b")).toEqual({ fields: {}, files: {} });
  });

  it("keeps every file of a `[]` name, in order, in fileLists (how an array of files encodes); without one there is no fileLists", () => {
    const [a, b, c] = [enc.encode("one"), tricky, enc.encode("three")];
    const { body, contentType } = encodeMultipart(
      { prompt: "p" },
      { "image[]": [{ filename: "a.png", contentType: "image/png", data: a }, { data: b }], mask: { filename: "m.png", data: c } },
    );
    const form = parseMultipart(body, contentType);
    expect(form.files).toEqual({ mask: { filename: "m.png", contentType: "application/octet-stream", data: c } });
    expect(form.fileLists).toEqual({
      "image[]": [
        { filename: "a.png", contentType: "image/png", data: a },
        { filename: "blob", contentType: "application/octet-stream", data: b },
      ],
    });
    const plain = encodeMultipart({ a: "1" }, { f: { data: a } });
    expect(parseMultipart(plain.body, plain.contentType).fileLists).toBeUndefined();
  });

  it("rejects a missing boundary, a non-multipart type and malformed bodies with 400", () => {
    const ok = 'Content-Disposition: form-data; name="a"\r\n\r\nv';
    expect400(() => parseMultipart(enc.encode("x"), "multipart/form-data"));
    expect400(() => parseMultipart(enc.encode("x"), "application/json; boundary=b"));
    expect400(() => parseMultipart(enc.encode("no boundary here"), "multipart/form-data; boundary=b"));
    expect400(() => parseMultipart(enc.encode(`--b\r\n${ok}`), "multipart/form-data; boundary=b")); // unterminated
    expect400(() => parseMultipart(enc.encode('--b\r\nContent-Disposition: form-data; name="a"\r\nv\r\n--b--'), "multipart/form-data; boundary=b"));
    expect400(() => parseMultipart(enc.encode("--b\r\nContent-Type: text/plain\r\n\r\nv\r\n--b--"), "multipart/form-data; boundary=b"));
    expect400(() => parseMultipart(enc.encode("--b\r\nContent-Disposition: form-data\r\n\r\nv\r\n--b--"), "multipart/form-data; boundary=b"));
    expect400(() => parseMultipart(enc.encode(`--bjunk\r\n${ok}\r\n--b--`), "multipart/form-data; boundary=b"));
  });

  it("keeps a file made of adversarial near-boundaries whole", () => {
    // Its search is linear: bytes.test.ts counts the comparisons of this very pattern.
    const boundary = "x".repeat(70);
    const junk = `\r\n--${"x".repeat(69)}y`.repeat(60_000); // ~4.4 MB of partial matches
    const body = enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="f"\r\n\r\n${junk}\r\n--${boundary}--\r\n`);
    const { files } = parseMultipart(body, `multipart/form-data; boundary=${boundary}`);
    expect(Buffer.from(files.f!.data).toString("latin1")).toBe(junk);
  });
});
