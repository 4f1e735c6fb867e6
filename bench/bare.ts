/**
 * The bare server the benchmarks compare the service with: Fastify answering
 * one route with an answer recorded from the service, so the bodies have the
 * same shape and size. It reads and parses a request body as the service's
 * servers do, and serializes the answer anew for every request (or, with
 * BARE_SEND=bytes, sends the recorded bytes as they are: a server that does no
 * work at all for an answer the service keeps serialized); it has no
 * authentication, rate limiting, logging or storage, unless BARE_DURABLE_FILE
 * names a database: then each request's body is stored durably before it is
 * answered (bench/bare-store.ts). Started as a child by `startBare`
 * (bench/comparison.ts), on the repo's own fastify.
 *
 * Env: BARE_HOST, BARE_PORT, BARE_METHOD, BARE_PATH, BARE_ANSWER_FILE (the
 * answer's JSON text), BARE_SEND (serialize, the default, or bytes),
 * BARE_DURABLE_FILE (a SQLite file, made if missing).
 */
import { readFileSync } from "node:fs";
import Fastify from "fastify";
import { acceptAnyBody, parseJsonBody } from "../src/http/transport.js";
import { durableStore } from "./bare-store.js";

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const method = setting("BARE_METHOD");
if (method !== "GET" && method !== "POST") throw new Error(`BARE_METHOD must be GET or POST, got ${method}`);
const recorded = readFileSync(setting("BARE_ANSWER_FILE"));
const asBytes = process.env.BARE_SEND === "bytes";
const answer: unknown = JSON.parse(recorded.toString("utf8"));
const durableFile = process.env.BARE_DURABLE_FILE;
const store = durableFile ? durableStore(durableFile) : null;

/** The strategy an order body names (0 when none): the stored row's key, as the service's orders have. */
const strategyOf = (body: unknown): number => {
  const id = (body as { Order?: { StrategyId?: unknown } } | undefined)?.Order?.StrategyId;
  return typeof id === "number" && Number.isSafeInteger(id) ? id : 0;
};

const app = Fastify({ logger: false });
acceptAnyBody(app);
app.route({
  method,
  url: setting("BARE_PATH"),
  handler: async (request, reply) => {
    const parsed = parseJsonBody(request.body);
    if (!parsed.ok) return reply.code(400).send({ error: "the body is not JSON" });
    if (store) await store.store(strategyOf(parsed.value), String(request.body));
    return asBytes ? reply.type("application/json; charset=utf-8").send(recorded) : answer;
  },
});
process.on("SIGTERM", () => {
  void app.close().then(() => process.exit(0));
});
await app.listen({ host: setting("BARE_HOST"), port: Number(setting("BARE_PORT")) });
