import { parentPort, workerData } from "node:worker_threads";

/**
 * A journal's writer thread that stops, as a real one would on a fault of its
 * own (test/store/journal-thread.test.ts): at its first request ("exit"), or
 * at its start with an error ("throw", as a database it cannot open).
 */
const { stop } = workerData as { stop: "exit" | "throw" };
if (stop === "throw") throw new Error("unable to open database file");
parentPort?.once("message", () => process.exit(3));
