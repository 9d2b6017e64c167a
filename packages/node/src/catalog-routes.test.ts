import { runCatalogRouteSuite } from "@tollgate/testing";
import { serve } from "./server.js";

// The same catalog route suite as core, through the Node bridge on a real port.
runCatalogRouteSuite("standalone server on a real port", async (gateway) => {
  const running = await serve(gateway, { port: 0 });
  return { fetch: (path, init) => fetch(`${running.url}${path}`, init), close: () => running.close() };
});
