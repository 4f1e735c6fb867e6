import { writeFileSync } from "node:fs";
import { generatedModules } from "./codegen.js";

/** `npm run client:generate`: rewrites generated/ from the documents the code makes. */
for (const [file, text] of Object.entries(await generatedModules())) {
  writeFileSync(new URL(`generated/${file}`, import.meta.url), text);
}
