import { connectDirect, runCatalogRouteSuite } from "../testing/catalog-route-suite.js";

runCatalogRouteSuite("gateway.fetch", connectDirect);
