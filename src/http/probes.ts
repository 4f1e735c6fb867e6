import type { FastifyInstance } from "fastify";
import type { ServiceMetrics } from "../metrics.js";
import type { Readiness } from "../services/readiness.js";
import { tallyRequests } from "./request-tally.js";

/**
 * Endpoints for operators and their machines, on each v4 server: `/healthz`
 * (the process answers), `/readyz` (it can serve: 503 with the failed check
 * otherwise) and `/metrics` (Prometheus). No key, no rate limit, not API
 * operations: they are not in the operation table, its OpenAPI documents or
 * its permissions, and they are not counted in the request metrics.
 */
export const PROBE_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz", "/metrics"]);

export interface Probes {
  readonly metrics: ServiceMetrics;
  readonly readiness: () => Promise<Readiness>;
}

/**
 * Adds the probes to a server, and the request metrics to every route
 * registered after it (`operationOf` names a route's operation by its path;
 * other routes, such as the OpenAPI document, are labelled with their path).
 */
export function registerProbes(
  app: FastifyInstance,
  server: string,
  probes: Probes,
  operationOf: (path: string) => string | undefined,
): void {
  tallyRequests(app, server, probes.metrics.requests, (path) =>
    PROBE_PATHS.has(path) ? null : (operationOf(path) ?? path),
  );
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const { ready, checks } = await probes.readiness();
    return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "not ready", checks });
  });
  app.get("/metrics", async (_request, reply) => {
    const { contentType, body } = await probes.metrics.render();
    return reply.type(contentType).send(body);
  });
}
