import { ConfigError } from "../config-error.js";
import { hashKey } from "../core/keys.js";
import { withTransaction } from "../store/transaction.js";
import { createKey } from "./keys.js";
import { createPerson } from "./people.js";
import { dbOf, type Runtime } from "./runtime.js";

export type BootstrapOutcome =
  | { readonly kind: "unchanged" }
  /** A service administrator was created; `accessKey` is shown once and never again. */
  | { readonly kind: "created"; readonly personId: number; readonly accessKey: string };

/**
 * Makes sure a service administrator can reach the service. With a chosen key
 * (BOOTSTRAP_ADMIN_KEY) an administrator holding exactly that key exists
 * afterwards; without one, an empty database gets an administrator and a new key.
 * One transaction: a start that fails half-way leaves no administrator without
 * the key that was to reach them (the next start would not make another).
 */
export async function ensureServiceAdmin(runtime: Runtime, chosenKey: string | undefined): Promise<BootstrapOutcome> {
  return withTransaction(runtime, async (ctx) => {
    const { tx } = ctx;
    if (chosenKey !== undefined) {
      const existing = await tx
        .selectFrom("access_keys as k")
        .innerJoin("persons as p", "p.id", "k.person_id")
        .select(["p.role", "k.revoked_at", "k.expires_at"])
        .where("k.key_hash", "=", hashKey(chosenKey))
        .executeTakeFirst();
      if (existing) {
        if (existing.role !== "admin") {
          throw new ConfigError("BOOTSTRAP_ADMIN_KEY", "belongs to a person who is not a service admin");
        }
        if (existing.revoked_at !== null) {
          throw new ConfigError("BOOTSTRAP_ADMIN_KEY", "has been revoked; choose another key");
        }
        if (existing.expires_at !== null && existing.expires_at <= ctx.clock.nowMs()) {
          throw new ConfigError("BOOTSTRAP_ADMIN_KEY", "has expired; choose another key");
        }
        return { kind: "unchanged" };
      }
      const personId = await newAdmin(ctx);
      await createKey(ctx, { personId, value: chosenKey, comment: "bootstrap administrator key" });
      return { kind: "created", personId, accessKey: chosenKey };
    }
    const anyone = await tx.selectFrom("persons").select("id").limit(1).executeTakeFirst();
    if (anyone) return { kind: "unchanged" };
    const personId = await newAdmin(ctx);
    const key = await createKey(ctx, { personId, comment: "first administrator key" });
    return { kind: "created", personId, accessKey: key.accessKey };
  });
}

async function newAdmin(ctx: Runtime): Promise<number> {
  const admins = await dbOf(ctx)
    .selectFrom("persons")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("role", "=", "admin")
    .executeTakeFirstOrThrow();
  const n = Number(admins.n) + 1;
  const created = await createPerson(ctx, {
    email: `admin${n === 1 ? "" : n}@strategy-hub.invalid`,
    firstName: "Service",
    lastName: "Administrator",
    role: "admin",
  });
  return created.personId;
}
