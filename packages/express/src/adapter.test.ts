// Express: the Router mounted under the base path (with and without express.json() in front), and
// mounted at the root with the `basePath` option instead.
import http from "node:http";
import { listenHttp, runAdapterConformance } from "@tollgate/testing";
import express from "express";
import { createHandler } from "./index.js";

runAdapterConformance("express", {
  preParsedJson: true,
  start: async (gateway, { basePath, preParsedJson, ...options }) => {
    const app = express();
    if (preParsedJson) app.use(express.json());
    app.get("/health", (_req, res) => void res.send("ok"));
    app.use(basePath, createHandler(gateway, options));
    return listenHttp(http.createServer(app));
  },
});

runAdapterConformance("express, mounted at / with basePath", {
  start: async (gateway, options) => listenHttp(http.createServer(express().use(createHandler(gateway, options)))),
});
