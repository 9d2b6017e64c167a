import { describe, expect, it } from "vitest";
import { createFetchHttpClient } from "../http/client.js";
import { runChatUpstreamSuite } from "@tollgate/testing";
import { chatUsageOf, outputTextOf } from "./openai-chat.js";

// The chat methods and the fetch client's streaming against a local stub upstream.
runChatUpstreamSuite("fetch", createFetchHttpClient());

describe("chat answer readers", () => {
  it("reads usage only when both token counts are non-negative integers, details when they are", () => {
    expect(chatUsageOf({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 })).toEqual({ promptTokens: 5, completionTokens: 2 });
    expect(chatUsageOf({ prompt_tokens: 5, completion_tokens: 2, prompt_tokens_details: { cached_tokens: -1 }, completion_tokens_details: null })).toEqual({
      promptTokens: 5,
      completionTokens: 2,
    });
    // Reasoning an adapter left out of completion_tokens (Gemini's thoughts), but reported apart or in the total, is output.
    expect(chatUsageOf({ prompt_tokens: 21, completion_tokens: 0, total_tokens: 81, completion_tokens_details: { reasoning_tokens: 60 } })).toEqual({
      promptTokens: 21,
      completionTokens: 60,
      reasoningTokens: 60,
    });
    expect(chatUsageOf({ prompt_tokens: 20, completion_tokens: 198, total_tokens: 623 })).toEqual({ promptTokens: 20, completionTokens: 603 });
    expect(chatUsageOf({ prompt_tokens: 20, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 9 } })).toMatchObject({ completionTokens: 9 });
    for (const bad of [
      null,
      undefined,
      "x",
      [],
      {},
      { prompt_tokens: 5 },
      { prompt_tokens: 1.5, completion_tokens: 2 },
      { prompt_tokens: "5", completion_tokens: 2 },
    ]) {
      expect(chatUsageOf(bad)).toBeUndefined();
    }
  });

  it("concatenates content parts of every text kind, refusals, and function and custom tool calls across choices", () => {
    const choices = [
      {
        message: {
          content: [
            { type: "text", text: "a" },
            { type: "refusal", refusal: "b" },
            { type: "image_url", image_url: { url: "x" } },
            { type: "thinking", thinking: [{ type: "text", text: "t" }] },
          ],
          refusal: "c",
        },
      },
      { message: { content: null, function_call: { name: "f", arguments: "{}" } } },
      {
        message: {
          tool_calls: [{ function: { name: "g", arguments: '{"x":1}' } }, { type: "custom", custom: { name: "h", input: "diff" } }, { type: "custom" }, null],
        },
      },
      { delta: { content: "ignored: not a message" } },
      "junk",
    ];
    expect(outputTextOf(choices, "message")).toBe('abtcf{}g{"x":1}hdiff');
    expect(outputTextOf(choices, "delta")).toBe("ignored: not a message");
    expect(outputTextOf(undefined, "delta")).toBe("");
  });
});
