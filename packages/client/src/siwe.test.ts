/** The client's own SIWE text and EIP-55 checksum against viem's, which the gateway parses and verifies with. */
import { randomBytes } from "node:crypto";
import { getAddress } from "viem";
import { createSiweMessage, parseSiweMessage } from "viem/siwe";
import { describe, expect, it } from "vitest";
import { buildSiweMessage, toChecksumAddress } from "./siwe.js";

describe("toChecksumAddress", () => {
  it("equals viem's getAddress for random addresses in any case", () => {
    for (let i = 0; i < 50; i++) {
      const hex = `0x${randomBytes(20).toString("hex")}`;
      expect(toChecksumAddress(hex)).toBe(getAddress(hex));
      expect(toChecksumAddress(hex.toUpperCase().replace("0X", "0x"))).toBe(getAddress(hex));
    }
    expect(toChecksumAddress("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")).toBe("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
  });

  it("throws a TypeError on anything else", () => {
    for (const bad of ["", "0x12", "5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", `0x${"g".repeat(40)}`, undefined as unknown as string])
      expect(() => toChecksumAddress(bad)).toThrow(TypeError);
  });
});

describe("buildSiweMessage", () => {
  const issuedAt = new Date("2026-11-23T12:00:00.000Z");
  const base = {
    domain: "127.0.0.1:3000",
    address: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
    uri: "http://127.0.0.1:3000",
    chainId: 8453,
    nonce: "abcDEF123456",
    issuedAt,
  };

  it("builds exactly viem's createSiweMessage text, which viem parses back", () => {
    const cases = [
      base,
      { ...base, statement: "Sign in to Tollgate." },
      { ...base, domain: "app.example.com", uri: "https://app.example.com/dashboard", chainId: 1, statement: "" },
      { ...base, domain: "localhost:3000", scheme: "http" },
      {
        ...base,
        statement: "All fields.",
        expirationTime: new Date("2026-11-24T12:00:00.000Z"),
        notBefore: new Date("2026-11-23T11:00:00.000Z"),
        requestId: "req-1",
        resources: ["https://example.com/a", "ipfs://bafy"],
      },
    ];
    for (const fields of cases) {
      const mine = buildSiweMessage(fields);
      expect(mine).toBe(createSiweMessage({ ...fields, address: getAddress(fields.address), version: "1" }));
      expect(parseSiweMessage(mine)).toMatchObject({
        domain: fields.domain,
        address: getAddress(fields.address),
        chainId: fields.chainId,
        nonce: fields.nonce,
        uri: fields.uri,
        version: "1",
        issuedAt,
      });
    }
  });

  it("rejects what EIP-4361 does not allow, before anything is signed", () => {
    for (const bad of [
      { ...base, nonce: "short" },
      { ...base, nonce: "has space 123" },
      { ...base, domain: "http://127.0.0.1:3000" },
      { ...base, uri: "not a uri" },
      { ...base, chainId: 1.5 },
      { ...base, statement: "two\nlines" },
      { ...base, address: "0x12" },
      { ...base, version: "2" as "1" },
      { ...base, resources: ["nope"] },
    ])
      expect(() => buildSiweMessage(bad)).toThrow(TypeError);
  });
});
