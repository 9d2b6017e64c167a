import { runExampleServerTest } from "../example-server-test.js";

runExampleServerTest(import.meta.dirname);
