import { withTransaction } from "../store/transaction.js";
import type { Principal } from "./keys.js";
import type { Runtime } from "./runtime.js";

/** A key unused this long starts a new session on its next use. */
export const SESSION_GAP_MS = 30 * 60 * 1000;

/**
 * Key sessions: API keys have no log-in, so a key's first use, and its first
 * use after a pause of SESSION_GAP_MS, counts as the sign-in handshake. Each
 * session is recorded (for the white-label instrumentation export) and sets the
 * person's LastLoggedIn and LastIP. Last use is tracked in memory, so a
 * restart starts a new session on each key's next use.
 */
export class KeySessions {
  readonly #lastUse = new Map<number, number>();

  /** Notes a use of the caller's key; a promise only when it starts a session, which is recorded. */
  noteUse(runtime: Runtime, caller: Principal, server: string, ipAddress: string): Promise<void> | undefined {
    const now = runtime.clock.nowMs();
    const last = this.#lastUse.get(caller.keyId);
    this.#lastUse.set(caller.keyId, now);
    // A clock set back by the sandbox also starts a new session.
    if (last !== undefined && now >= last && now - last < SESSION_GAP_MS) return undefined;
    return withTransaction(runtime, async ({ tx }) => {
      await tx
        .insertInto("key_sessions")
        .values({
          key_id: caller.keyId,
          person_id: caller.personId,
          white_label_site_id: caller.whiteLabelSiteId,
          server,
          ip_address: ipAddress,
          started_at: now,
        })
        .execute();
      await tx
        .updateTable("persons")
        .set({ last_logged_in: now, last_ip: ipAddress })
        .where("id", "=", caller.personId)
        .execute();
    });
  }
}
