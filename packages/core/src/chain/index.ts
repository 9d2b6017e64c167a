/** The Chain port and its viem implementation, the USDC ABI, and EIP-3009 helpers. */
export { ChainError, type Address, type Chain, type Hex, type SignedTransaction, type TokenDomain, type TransferAuthorization } from "./types.js";
export { createViemChain, type ViemChainOptions } from "./viem-chain.js";
export { isNonceConflict, isRefusal } from "./errors.js";
export { USDC_ABI } from "./usdc-abi.js";
export { TRANSFER_WITH_AUTHORIZATION_TYPES, randomNonce, signTransferAuthorization, verifyTransferAuthorization, type TransferAuthorizationTypedData, type TypedDataSigner } from "./eip3009.js";
export type { ChainConfig } from "./options.js";
/**
 * ABI and creation bytecode of the test contracts (TestUSDC, TestSmartWallet), compiled at build
 * time by `npm run contracts:build`. For development and test chains only (the dev chain of
 * `tollgate serve`, test harnesses): TestUSDC mints to anyone, so it must never hold value.
 */
export { TEST_SMART_WALLET_CONTRACT, TEST_USDC_CONTRACT } from "./generated/test-contracts.js";
