// The baseline for scripts/bench: a bare Node.js HTTP server that echoes the JSON it is sent,
// with 201 like the order endpoint. No validation, no pricing, no storage.
"use strict";
const http = require("http");
const port = Number(process.argv[2] || 8081);
http
  .createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      res.writeHead(201, { "Content-Type": "application/json", "Content-Length": body.length });
      res.end(body);
    });
  })
  .listen(port, "127.0.0.1", () => process.stderr.write(`node echo listening on ${port}\n`));
