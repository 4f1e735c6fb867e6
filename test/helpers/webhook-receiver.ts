import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the receiver got. */
export interface Received {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A real webhook receiver: an HTTP server on 127.0.0.1 at a port of its own,
 * keeping every request and answering the status it is told (200 unless
 * told), or not at all while `hang` is set.
 */
export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  status: number;
  hang: boolean;
  close(): Promise<void>;
}

export async function startReceiver(path = "/hooks/strategy-hub"): Promise<Receiver> {
  const received: Received[] = [];
  const receiver = { status: 200, hang: false };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      if (receiver.hang) return;
      response.statusCode = receiver.status;
      response.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/**
 * Verifies a delivery as docs/webhooks.md tells receivers to: the
 * Webhook-Signature header's v1 is the HMAC-SHA256 of "<t>.<body>" with the
 * secret, compared in constant time; answers t (unix seconds) or throws.
 */
export function verifiedTimestamp(delivery: Received, secret: string): number {
  const header = String(delivery.headers["webhook-signature"] ?? "");
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) throw new Error(`a malformed Webhook-Signature: ${header}`);
  const [, t, v1] = match as unknown as [string, string, string];
  const expected = createHmac("sha256", secret).update(`${t}.${delivery.body}`).digest();
  if (!timingSafeEqual(expected, Buffer.from(v1, "hex"))) throw new Error("the signature does not verify");
  return Number(t);
}
