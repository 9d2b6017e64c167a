/** The Chain port and its viem implementation, the USDC ABI, and EIP-3009 helpers. */
export { ChainError, type Address, type Chain, type Hex, type TokenDomain, type TransferAuthorization } from "./types.js";
export { createViemChain, isNonceConflict, type ViemChainOptions } from "./viem-chain.js";
export { USDC_ABI } from "./usdc-abi.js";
export { TRANSFER_WITH_AUTHORIZATION_TYPES, randomNonce, signTransferAuthorization, verifyTransferAuthorization } from "./eip3009.js";
export type { ChainConfig } from "./options.js";
