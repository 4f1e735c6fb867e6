import { LEGACY_COMMANDS } from "./legacy/commands.js";
import { legacyOpenApiDocument } from "./legacy/openapi.js";
import { openApiDocument } from "./v4/openapi.js";
import { V4_SERVERS } from "./v4/operation.js";
import { operationsOf } from "./v4/server.js";
import { OPERATIONS } from "./v4/table.js";

/**
 * The OpenAPI documents of the four servers as the code makes them, without a
 * running service: every operation, the sandbox's included (a server serves
 * them only while the sandbox is on).
 */
export function openApiDocuments(): Readonly<Record<(typeof V4_SERVERS)[number] | "LEGACY", object>> {
  const [wl, gen, geo] = V4_SERVERS.map((server) => openApiDocument(server, operationsOf(server, OPERATIONS, true)));
  return { WL: wl as object, GEN: gen as object, GEO: geo as object, LEGACY: legacyOpenApiDocument(LEGACY_COMMANDS) };
}
