import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { KeysetKey, PagePosition } from "../store/page.js";

/**
 * Opaque, tamper-evident cursors: a base64url JSON payload signed with a
 * secret the service keeps in storage (so every server process accepts the
 * cursors of the others). The payload binds the cursor to its operation, its
 * filters and its sort order.
 */
interface CursorPayload {
  /** Binding: hash of operation and filters. */
  readonly b: string;
  /** Direction: "a" after, "b" before. */
  readonly d: "a" | "b";
  readonly k: KeysetKey;
  /** Ascending order. */
  readonly o: boolean;
}

export interface CursorCodec {
  encode(binding: string, ascending: boolean, position: PagePosition): string;
  /** The position, or null when the cursor is malformed, tampered or from another query. */
  decode(binding: string, ascending: boolean, cursor: string): PagePosition | null;
}

export function cursorCodec(secret: string): CursorCodec {
  const sign = (payload: string) => createHmac("sha256", secret).update(payload).digest().subarray(0, 18);
  return {
    encode(binding, ascending, position) {
      const payload: CursorPayload = {
        b: binding,
        d: position.direction === "after" ? "a" : "b",
        k: position.key,
        o: ascending,
      };
      const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
      return `${body}.${sign(body).toString("base64url")}`;
    },
    decode(binding, ascending, cursor) {
      const [body, signature, extra] = cursor.split(".");
      if (!body || !signature || extra !== undefined) return null;
      // Compared as text: base64url decoding forgives trailing characters, the signature must not.
      const given = Buffer.from(signature);
      const expected = Buffer.from(sign(body).toString("base64url"));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      let payload: CursorPayload;
      try {
        payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as CursorPayload;
      } catch {
        return null;
      }
      if (payload.b !== binding || payload.o !== ascending || !Array.isArray(payload.k)) return null;
      return { direction: payload.d === "a" ? "after" : "before", key: payload.k };
    },
  };
}

/** A short hash of the operation and its filters, so a cursor only continues its own query. */
export function queryBinding(operationId: string, filters: Readonly<Record<string, unknown>>): string {
  const canonical = JSON.stringify([operationId, Object.entries(filters).sort(([a], [b]) => a.localeCompare(b))]);
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 16);
}
