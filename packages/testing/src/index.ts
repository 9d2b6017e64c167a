/**
 * `@tollgate/testing`: the conformance suites every store implementation runs, and their
 * fixtures, the adapter and route suites, and the anvil harness. Needs `vitest` (a peer dependency).
 */
export { runStoreConformance, storeConformanceGroups } from "./store-conformance.js";
export type { StoreConformanceOptions, StoreConformanceTestName } from "./store-conformance.js";
export type { StoreTest } from "./store-fixtures.js";
export { makeIntent, makeKey } from "./store-fixtures.js";
export type { Store } from "@tollgate/core";
export { runKeyRouteSuite } from "./gateway-suite-keys.js";
export { runPaymentRouteSuite } from "./gateway-suite-payments.js";
export { runDispenserRouteSuite, startUsdcNode, DEAD_CHAIN, SOME_KEY, type UsdcNode } from "./gateway-suite-dispenser.js";
export { runSettlementRouteSuite } from "./gateway-suite-settlement.js";
export { runFundingRouteSuite } from "./gateway-suite-funding.js";
export { runFeedbackRouteSuite } from "./gateway-suite-feedback.js";
export { runAgentRouteSuite } from "./gateway-suite-agents.js";
export { runMediaRouteSuite } from "./gateway-suite-media.js";
export { runChatRouteSuite } from "./gateway-suite-chat.js";
export { runGovernanceRouteSuite } from "./gateway-suite-governance.js";
export { startChatStub, STUB_USAGE, STUB_WORDS, TRICKLE_USAGE, type ChatStub } from "./chat-stub.js";
export { runVideoRouteSuite } from "./gateway-suite-video.js";
export { withGateway, type GatewaySuiteOptions, type Harness } from "./gateway-suite-fixtures.js";
export { connectDirect, runCatalogRouteSuite, type Connect, type TestClient } from "./catalog-route-suite.js";
export { generateCards, prng } from "./card-fixtures.js";
export { startAnvil, deployTestUsdc, deployTestSmartWallet, mintUsdc, approveUsdc, setNextBlockTimestamp, anvilRpc, fundedAccount, ANVIL_ACCOUNTS, type AnvilNode, type AnvilAccount, type StartAnvilOptions } from "./anvil.js";
export { runAdapterConformance, listenHttp, type AdapterConformanceOptions, type AdapterStartOptions, type AdapterTarget } from "./adapter-suite.js";
export { closedPortUrl } from "./directory-stub.js";
export { runAttackSuite } from "./attack-suite.js";
export type { AttackSuiteOptions } from "./attack-harness.js";
export { runChatUpstreamSuite } from "./chat-upstream-suite.js";
export { startRpcProxy, type RpcHook, type RpcProxy, type RpcProxyState } from "./rpc-proxy.js";
export { chainFaultsPerSuite, queueCharges, startOtherRpcNode, type ChainFaults, type PooledTransaction } from "./chain-faults.js";
