import net from "node:net";
import { ConfigError } from "../config-error.js";

/**
 * Makes sure every port can be listened on, before anything is stored: a port
 * another process holds stops the start with the variable to change, and no
 * administrator key is made by a start that cannot serve. Each port is bound
 * and let go at once; a process taking one in the moment between fails the
 * listen later, after the key was shown.
 */
export async function checkPortsFree(host: string, ports: Readonly<Record<string, number>>): Promise<void> {
  for (const [server, port] of Object.entries(ports)) {
    const problem = await bindFails(host, port);
    if (problem === null) continue;
    if (problem === "EADDRINUSE")
      throw new ConfigError(`${server}_PORT`, `${port} is in use on ${host} by another process`);
    if (problem === "EACCES") throw new ConfigError(`${server}_PORT`, `${port} needs privileges this process lacks`);
    if (problem === "EADDRNOTAVAIL" || problem === "ENOTFOUND" || problem === "EAI_AGAIN") {
      throw new ConfigError("HOST", `${host} is not an address of this machine (${problem})`);
    }
    throw new ConfigError(`${server}_PORT`, `${port} on ${host} cannot be listened on (${problem})`);
  }
}

/** The error code binding fails with, or null when it can be bound. */
function bindFails(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}
