import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const HOST = "127.0.0.1";

/**
 * Ports below the range Linux hands out as the local ends of outgoing
 * connections (ip_local_port_range, from 32768): a port picked by listening on
 * port 0 comes from that range, and between its closing and the service's
 * listening, another test's outgoing connection (PostgreSQL's, a child's) may
 * take it.
 */
const PORT_LOW = 20_000;
const PORT_HIGH = 32_767;

/**
 * A port found free is claimed by a file named after it, made exclusively and
 * kept until this process exits: test files run two at a time, each in a
 * process of its own, and a service takes a second or more to listen on the
 * ports it was given, so two processes could otherwise pick the same free port
 * and the slower service fail to listen (EADDRINUSE). A claim left by a process
 * that is gone (killed) is taken over. Where no claim can be written (a full
 * or read-only temp directory), ports are picked as before, unclaimed.
 */
const CLAIMS = join(tmpdir(), `strategy-hub-port-claims-${process.getuid?.() ?? "user"}`);
const claimed: string[] = [];

/** Free ports on 127.0.0.1: distinct random ones below the outgoing range, each claimed, listened on and closed (tests and benchmarks). */
export async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count; attempt++) {
    const port = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW + 1));
    if (ports.includes(port)) continue;
    if (claim(port) && (await freeNow(port))) ports.push(port);
    else if (attempt > 1_000) throw new Error("no free port below the outgoing range");
  }
  return ports;
}

/** Whether this process may use the port: claimed now, or no claim can be written at all. */
function claim(port: number): boolean {
  if (!claimsWritable()) return true;
  const path = join(CLAIMS, String(port));
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(path, String(process.pid), { flag: "wx" });
      // The first claim registers their release.
      if (claimed.push(path) === 1) {
        process.on("exit", () => {
          for (const made of claimed) rmSync(made, { force: true });
        });
      }
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return true;
      if (claimantAlive(path)) return false;
      rmSync(path, { force: true });
    }
  }
  return false;
}

let writable: boolean | undefined;

function claimsWritable(): boolean {
  if (writable === undefined) {
    try {
      mkdirSync(CLAIMS, { recursive: true });
      writable = true;
    } catch {
      writable = false;
    }
  }
  return writable;
}

function claimantAlive(path: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(path, "utf8"));
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but is not ours to signal.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function freeNow(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}
