import { connectDirect, runCatalogRouteSuite } from "@tollgate/testing";

runCatalogRouteSuite("gateway.fetch", connectDirect);
