import { BlockList, isIP } from "node:net";
import { refuse } from "../core/errors.js";

/**
 * Which URLs a site may register as its webhook endpoint
 * (docs/decisions.md "Webhook endpoints (issue 13)"). Outside the sandbox:
 * https only, and not to an address inside the service's own network
 * (loopback, private, link-local, or a name such as localhost), so the
 * service cannot be made to post into its own network. In the sandbox, http
 * and any host are allowed: a developer's receiver runs on their machine.
 * Names are not resolved here: a public name that resolves inward is the
 * network's to stop.
 */

export const MAX_URL_LENGTH = 2048;

const INWARD = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
] as const) {
  INWARD.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
] as const) {
  INWARD.addSubnet(network, prefix, "ipv6");
}

/** A URL as written, read and put in one canonical form (how registrations are compared); refused when unreadable. */
export function parsedUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw refuse("InvalidValue", { field: "Url", message: "Url is not an absolute URL" });
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw refuse("InvalidValue", { field: "Url", message: "Url must be an http or https URL" });
  }
  return url;
}

/** The URL to register, in canonical form, or a refusal naming Url. */
export function endpointUrl(text: string, sandbox: boolean): string {
  const url = parsedUrl(text);
  if (url.username !== "" || url.password !== "") {
    throw refuse("InvalidValue", { field: "Url", message: "Url must not carry a user name or password" });
  }
  if (url.hash !== "") throw refuse("InvalidValue", { field: "Url", message: "Url must not carry a fragment (#)" });
  if (!sandbox) {
    if (url.protocol !== "https:") {
      throw refuse("InvalidValue", {
        field: "Url",
        message: "Url must be https (http is allowed in the sandbox only)",
      });
    }
    if (isInward(url.hostname)) {
      throw refuse("InvalidValue", {
        field: "Url",
        message: "Url must not point into a private, loopback or link-local network",
      });
    }
  }
  // Judged as kept: a space, and each UTF-8 byte of a character outside ASCII, is three characters percent-encoded.
  if (url.href.length > MAX_URL_LENGTH) {
    throw refuse("InvalidValue", {
      field: "Url",
      message: `Url is ${url.href.length} characters percent-encoded, as it is kept: at most ${MAX_URL_LENGTH}`,
    });
  }
  return url.href;
}

function isInward(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local")) return true;
  const family = isIP(host);
  if (family === 4) return INWARD.check(host, "ipv4");
  // An IPv4 address written as IPv6 (::ffff:7f00:1) is judged as the IPv4 one: BlockList maps it.
  if (family === 6) return INWARD.check(host, "ipv6");
  return false;
}
