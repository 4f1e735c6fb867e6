import net from "node:net";

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

/** Free ports on 127.0.0.1: distinct random ones below the outgoing range, each listened on and closed (tests and benchmarks). */
export async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count; attempt++) {
    const port = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW + 1));
    if (ports.includes(port)) continue;
    if (await freeNow(port)) ports.push(port);
    else if (attempt > 1_000) throw new Error("no free port below the outgoing range");
  }
  return ports;
}

function freeNow(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}
