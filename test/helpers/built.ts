import { execFileSync } from "node:child_process";
import { mkdirSync, rmdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * What the suite's child processes run: the compiled service in dist/, as
 * `npm start` and `npm run cli` run it, never the sources through tsx, which
 * costs each child about a second more of CPU (the suite starts hundreds).
 * `npm test` builds once before the run and says so in BUILT_ENV; a test file
 * run alone builds on its first child, so no child ever runs code older than
 * the sources. The build is incremental: seconds when little changed.
 */

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Set by test/run.ts once it has built dist for the run. */
export const BUILT_ENV = "STRATEGY_HUB_TEST_BUILT";
const LOCK = join(ROOT, "dist", ".test-build-lock");
/** A lock older than this was left by a killed build. */
const STALE_LOCK_MS = 120_000;

let builtHere = process.env[BUILT_ENV] === "1";

/** Builds dist (tsc -p tsconfig.build.json), one build at a time across test processes. */
export function buildDist(): void {
  mkdirSync(join(ROOT, "dist"), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      try {
        if (Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) rmdirSync(LOCK);
      } catch {
        // Released meanwhile.
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "inherit" });
  } finally {
    rmdirSync(LOCK);
  }
}

/** Builds dist unless this run has built it already. */
export function ensureBuilt(): void {
  if (builtHere) return;
  buildDist();
  builtHere = true;
}

/** The node arguments that run a module of src/ compiled (`main`, `cli/main`, `store/migrate-cli`). */
export function builtArgs(module: string): string[] {
  ensureBuilt();
  return ["--enable-source-maps", `dist/${module}.js`];
}
