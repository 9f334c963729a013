// A webhook receiver for fundsvc's tests: every request is verified with the
// Standard Webhooks reference library (npm standardwebhooks), never with
// fundsvc's own code, and logged; the answer is what the test set (a 2xx,
// 500s with an optional Retry-After, 410, or a dropped connection).
// Usage: node receiver.mjs REPO_ROOT; prints {"port": N} once listening on
// an ephemeral loopback port. Control: POST /_control {secrets, mode,
// retryAfter}; GET /_log answers every request received.
import http from "node:http";
import path from "node:path";
import { createRequire } from "node:module";

const root = process.argv[2];
const require = createRequire(path.join(root, "tools", "package.json"));
const { Webhook } = require("standardwebhooks");

let secrets = [];
let mode = "ok";
let retryAfter = "";
let delayMs = 0;
const log = [];

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

const server = http.createServer(async (req, res) => {
  const body = await readBody(req);
  if (req.url === "/_control") {
    const c = JSON.parse(body.toString());
    if (c.secrets) secrets = c.secrets;
    if (c.mode) mode = c.mode;
    retryAfter = c.retryAfter ?? "";
    delayMs = c.delayMs ?? 0;
    res.writeHead(204).end();
    return;
  }
  if (req.url === "/_log") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(log));
    return;
  }
  // Which of the secrets verify the request (reference library's verify).
  const verifiedWith = [];
  const errors = [];
  secrets.forEach((s, i) => {
    try {
      new Webhook(s).verify(body.toString(), req.headers);
      verifiedWith.push(i);
    } catch (e) {
      errors.push(String(e.message ?? e));
    }
  });
  const entry = {
    at: Date.now(), path: req.url, mode,
    id: req.headers["webhook-id"] ?? "", timestamp: req.headers["webhook-timestamp"] ?? "",
    signature: req.headers["webhook-signature"] ?? "", verifiedWith, errors,
    body: body.toString(),
  };
  log.push(entry);
  switch (mode) {
    case "down":
      req.socket.destroy();
      return;
    case "fail": {
      const h = retryAfter ? { "retry-after": String(retryAfter) } : {};
      res.writeHead(500, h).end("failing on purpose");
      return;
    }
    case "gone":
      res.writeHead(410).end();
      return;
    default:
      setTimeout(() => res.writeHead(verifiedWith.length > 0 ? 204 : 400).end(), delayMs);
  }
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});
