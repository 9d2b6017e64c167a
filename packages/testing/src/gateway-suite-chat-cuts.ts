/**
 * The cut part of the chat suite: streams that end early, billed by a key. A client that leaves
 * pays what was relayed (the upstream is cancelled), but on a model with hidden reasoning the
 * gateway reads on to the upstream's usage; a stream still running a minute before its reservation
 * lapses is billed and stopped. A client that leaves once the upstream has answered its headers,
 * before the first byte, pays the prompt (the upstream read it); one that leaves before those
 * headers pays nothing. A call not streamed runs to its answer whoever is listening, and pays it.
 */
import { expect, it } from "vitest";
import type { GatewayOptions } from "@tollgate/core";
import { STUB_USAGE, STUB_WORDS, TRICKLE_USAGE, type ChatStub } from "./chat-stub.js";
import type { Harness } from "./gateway-suite-fixtures.js";
import { richKey } from "./gateway-suite-media-helpers.js";
import { CHAT_MODEL, HELLO, meterChat, postChat, promptCount, REASONING_MODEL, settledKey, textCount } from "./gateway-suite-chat-helpers.js";

type Test = (title: string, fn: (h: Harness) => Promise<void>, extra?: () => Partial<GatewayOptions>) => ReturnType<typeof it>;

/** Registers the cut tests inside the chat suite's describe block; `upstream(mode, timeoutMs)` routes chat to the stub in `mode`. */
export function runChatCutSuite(test: Test, upstream: (mode: string, timeoutMs?: number) => Partial<GatewayOptions>, stub: () => ChatStub): void {
  /** Reads the role chunk and 4 words of a streamed answer of `model`, keeping the reader; `abort` leaves. */
  const readFourWords = async (h: Harness, token: string, model = CHAT_MODEL) => {
    const abort = new AbortController();
    const res = await postChat(h, { model, messages: HELLO, stream: true }, { token, signal: abort.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while ((text.match(/\n\n/g) ?? []).length < 5) text += decoder.decode((await reader.read()).value!, { stream: true });
    return { reader, decoder, text, abort, outputCap: Number(res.headers.get("x-output-cap")) };
  };
  /** Reads the role chunk and 4 words of a streamed answer of `model`, then leaves. */
  const leaveAfter4Words = async (h: Harness, token: string, model = CHAT_MODEL) => {
    const { reader, abort } = await readFourWords(h, token, model);
    abort.abort();
    await reader.cancel().catch(() => undefined);
  };
  /** Waits for the key's reservation to clear; it paid the prompt and the stub's first 4 words. */
  const paidFourWords = async (h: Harness, key: { keyId: string; token: string }, model = CHAT_MODEL) => {
    const delivered = STUB_WORDS.slice(0, 4).join("");
    const used = await meterChat(h, { promptTokens: await promptCount(HELLO), completionTokens: await textCount(delivered) }, model);
    expect(await settledKey(h, key)).toEqual({ used, reserved: "0" });
  };

  const cuts: [string, string, number | undefined][] = [
    ["a client that leaves after 4 words pays the prompt and exactly those 4 words; the upstream request is cancelled", CHAT_MODEL, undefined],
    // A reasoning model's upstream is read on after its client left; this one stalls, so its idle deadline ends the read.
    [
      "a reasoning model whose upstream stalls after the client left: the prompt and the 4 words once the upstream's idle deadline ends the read",
      REASONING_MODEL,
      300,
    ],
  ];
  for (const [title, model, timeoutMs] of cuts)
    test(
      title,
      async (h) => {
        const key = await richKey(h);
        const closed = stub().closedStalls();
        await leaveAfter4Words(h, key.token, model);
        await closed;
        await paidFourWords(h, key, model);
      },
      () => upstream("stall-4", timeoutMs),
    );

  test(
    "a stream still running a minute before its reservation (an hour) lapses: billed the prompt and what was relayed, the upstream cancelled, the stream ended without a receipt",
    async (h) => {
      const key = await richKey(h);
      const closed = stub().closedStalls();
      const read = await readFourWords(h, key.token);
      let text = read.text;
      // The upstream stalls after 4 words; the gateway's clock moves to a minute before the reservation ends.
      h.clock.advance(3_600_000 - 60_000);
      await closed;
      await paidFourWords(h, key);
      const { reader, decoder } = read;
      for (let step = await reader.read(); !step.done; step = await reader.read()) text += decoder.decode(step.value, { stream: true });
      expect(text).not.toContain("receipt");
    },
    () => upstream("stall-4"),
  );

  test(
    "a reasoning model's stream parked until a minute before its reservation lapses, its usage not yet seen: billed the prompt and its whole output cap (its hidden tokens are unknown)",
    async (h) => {
      const key = await richKey(h);
      const closed = stub().closedStalls();
      const { outputCap } = await readFourWords(h, key.token, REASONING_MODEL);
      h.clock.advance(3_600_000 - 60_000);
      await closed;
      const used = await meterChat(h, { promptTokens: await promptCount(HELLO), completionTokens: outputCap }, REASONING_MODEL);
      expect(await settledKey(h, key)).toEqual({ used, reserved: "0" });
    },
    () => upstream("stall-4"),
  );

  test(
    "a reasoning model (hidden thinking tokens) whose client leaves after 4 words: the gateway reads on without relaying, and the key pays the upstream's whole usage",
    async (h) => {
      const key = await richKey(h);
      await leaveAfter4Words(h, key.token, REASONING_MODEL);
      // The words seen are not the cost: the usage counts the thinking the stream never showed.
      expect(await settledKey(h, key)).toEqual({
        used: await meterChat(h, { promptTokens: 21, completionTokens: TRICKLE_USAGE.completion_tokens }, REASONING_MODEL),
        reserved: "0",
      });
    },
    () => upstream("trickle-25"),
  );

  test(
    "a client that leaves after the upstream's headers, before its first chunk: pays the prompt, not the answer",
    async (h) => {
      const key = await richKey(h);
      const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream: true }, { token: key.token, signal: AbortSignal.timeout(150) });
      await res.arrayBuffer().catch(() => undefined);
      const used = await meterChat(h, { promptTokens: await promptCount(HELLO), completionTokens: 0 });
      expect(await settledKey(h, key)).toEqual({ used, reserved: "0" });
    },
    () => upstream("quiet-600"),
  );

  test(
    "a call not streamed whose client leaves before the answer: the upstream answers anyway, and the key pays its usage",
    async (h) => {
      const key = await richKey(h);
      await postChat(h, { model: CHAT_MODEL, messages: HELLO }, { token: key.token, signal: AbortSignal.timeout(100) })
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
      const used = await meterChat(h, { promptTokens: STUB_USAGE.prompt_tokens, completionTokens: STUB_USAGE.completion_tokens });
      expect(await settledKey(h, key)).toEqual({ used, reserved: "0" });
    },
    () => upstream("slow-400"),
  );

  test(
    "a slow upstream and a client that gives up before its headers: nothing charged",
    async (h) => {
      const key = await richKey(h);
      // In process there is no socket to close: the answer to a gone client is written to nobody.
      await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream: true }, { token: key.token, signal: AbortSignal.timeout(100) })
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
      expect(stub().bodies.at(-1)!.stream).toBe(true);
      expect(await settledKey(h, key)).toEqual({ used: "0", reserved: "0" });
    },
    () => upstream("slow-400"),
  );
}
