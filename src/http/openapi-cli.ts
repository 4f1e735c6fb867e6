import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openApiDocuments } from "./openapi-documents.js";

/** Writes the OpenAPI documents of the four servers into a directory: WL.json, GEN.json, GEO.json, LEGACY.json. */
const directory = process.argv[2];
if (directory === undefined) {
  process.stderr.write("usage: openapi-cli <directory>\n");
  process.exit(2);
}
mkdirSync(directory, { recursive: true });
for (const [server, document] of Object.entries(openApiDocuments())) {
  writeFileSync(join(directory, `${server}.json`), `${JSON.stringify(document, null, 2)}\n`);
}
