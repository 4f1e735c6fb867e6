import type { CompiledQuery, Kysely } from "kysely";
import { type Caller, membership, type Role } from "../core/access.js";
import { refuse } from "../core/errors.js";
import { asPersonId, asPlatformId } from "../core/ids.js";
import { hashKey, isWellFormedKey, newKeyValue } from "../core/keys.js";
import type { Database } from "../store/schema.js";
import { changingKeys, keyCacheOf } from "./key-cache.js";
import { dbOf, type Runtime } from "./runtime.js";

/** An authenticated key with its person: everything a request needs to know about its caller. */
export interface Principal extends Caller {
  readonly keyId: number;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly comment: string | null;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
}

export type KeyRefusal = "MalformedKey" | "UnknownKey" | "ExpiredKey" | "RevokedKey";

export type Authentication =
  | { readonly ok: true; readonly principal: Principal }
  | { readonly ok: false; readonly error: KeyRefusal };

/** A key as stored, with its person: what the key cache keeps. Judged on each use. */
interface KeyRecord {
  readonly accepted: Authentication;
  readonly revoked: boolean;
  readonly expiresAtMs: number | null;
}

const refused = (error: KeyRefusal): Authentication => ({ ok: false, error });
const MALFORMED = refused("MalformedKey");
const UNKNOWN = refused("UnknownKey");
const EXPIRED = refused("ExpiredKey");
const REVOKED = refused("RevokedKey");

/** The lookup of a key by its hash, compiled once per database handle. */
const keyLookups = new WeakMap<Kysely<Database>, CompiledQuery<KeyLookupRow>>();
type KeyLookupRow = Awaited<ReturnType<ReturnType<typeof keyLookupQuery>["executeTakeFirstOrThrow"]>>;

function keyLookupQuery(db: Kysely<Database>, keyHash: string) {
  return db
    .selectFrom("access_keys as k")
    .innerJoin("persons as p", "p.id", "k.person_id")
    .leftJoin("sites as s", "s.id", "p.white_label_site_id")
    .select([
      "k.id as keyId",
      "k.platform_id",
      "k.comment",
      "k.created_at",
      "k.expires_at",
      "k.revoked_at",
      "p.id as personId",
      "p.role",
      "p.first_name",
      "p.last_name",
      "p.email",
      "p.white_label_site_id",
      "p.geo_site_id",
      "s.geo_site_id as site_geo_site_id",
    ])
    .where("k.key_hash", "=", keyHash);
}

async function loadKey(runtime: Runtime, keyHash: string): Promise<KeyRecord | null> {
  // The cache keeps what storage committed: never what a caller's open transaction sees.
  const db = runtime.storage.db;
  let lookup = keyLookups.get(db);
  if (!lookup) {
    lookup = keyLookupQuery(db, "").compile();
    keyLookups.set(db, lookup);
  }
  const query: CompiledQuery<KeyLookupRow> = { ...lookup, parameters: [keyHash] };
  const { rows } = await db.executeQuery(query);
  const row = rows[0];
  if (!row) return null;
  const principal: Principal = {
    keyId: row.keyId,
    personId: asPersonId(row.personId),
    role: row.role,
    ...membership(row.white_label_site_id, row.geo_site_id ?? row.site_geo_site_id),
    platformId: row.platform_id === null ? null : asPlatformId(row.platform_id),
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    comment: row.comment,
    createdAt: new Date(row.created_at),
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
  };
  return { accepted: { ok: true, principal }, revoked: row.revoked_at !== null, expiresAtMs: row.expires_at };
}

function judge(record: KeyRecord | null, nowMs: number): Authentication {
  if (record === null) return UNKNOWN;
  if (record.revoked) return REVOKED;
  if (record.expiresAtMs !== null && record.expiresAtMs <= nowMs) return EXPIRED;
  return record.accepted;
}

/**
 * Who a presented key is. Keys are kept in memory (services/key-cache.ts), so
 * this answers without a query, synchronously, unless the key is new to this
 * process or storage changed under it; a key created or revoked anywhere,
 * the CLI included, takes effect at once. Expiry is judged on the service
 * clock at each use. `connection` (any object standing for the connection the
 * key came on) spares hashing the same key again on each request of a client
 * that keeps its connection open. `beforeRead` is called when the key must be
 * read from storage, before it is: throwing there refuses the request without
 * the read (the v4 servers' rate limit of addresses presenting wrong keys).
 */
export function authenticate(
  runtime: Runtime,
  presented: string,
  connection?: object,
  beforeRead?: () => void,
): Authentication | Promise<Authentication> {
  if (!isWellFormedKey(presented)) return MALFORMED;
  const keyHash = connection === undefined ? hashKey(presented) : hashOn(connection, presented);
  const found = keyCacheOf<KeyRecord>(runtime.storage).find(keyHash, (hash) => {
    beforeRead?.();
    return loadKey(runtime, hash);
  });
  if (found instanceof Promise) return found.then((record) => judge(record, runtime.clock.nowMs()));
  return judge(found, runtime.clock.nowMs());
}

/** The key each open connection presented last, with its hash; gone with the connection. */
const lastPresented = new WeakMap<object, { readonly key: string; readonly hash: string }>();

function hashOn(connection: object, presented: string): string {
  const last = lastPresented.get(connection);
  if (last?.key === presented) return last.hash;
  const hash = hashKey(presented);
  lastPresented.set(connection, { key: presented, hash });
  return hash;
}

export interface NewKey {
  readonly personId: number;
  readonly expiresAt?: Date | undefined;
  readonly comment?: string | undefined;
  readonly platformId?: number | undefined;
  /** A chosen key value (BOOTSTRAP_ADMIN_KEY); otherwise a random one is made. */
  readonly value?: string | undefined;
}

export interface CreatedKey {
  readonly id: number;
  readonly accessKey: string;
}

export async function createKey(runtime: Runtime, input: NewKey): Promise<CreatedKey> {
  const value = input.value ?? newKeyValue();
  if (!isWellFormedKey(value)) {
    throw refuse("MalformedKey", { message: "A key is 16 to 200 characters of letters, digits and ._~+/=-" });
  }
  if (input.comment !== undefined && input.comment.length > 200) {
    throw refuse("InvalidValue", { field: "Comment", message: "Comment must be at most 200 characters" });
  }
  return changingKeys(runtime, async ({ tx }) => {
    const person = await tx.selectFrom("persons").select("id").where("id", "=", input.personId).executeTakeFirst();
    if (!person) throw refuse("NotFound", { field: "PersonId", message: `No person ${input.personId}` });
    if (input.platformId !== undefined) {
      const platform = await tx
        .selectFrom("platforms")
        .select("id")
        .where("id", "=", input.platformId)
        .executeTakeFirst();
      if (!platform) throw refuse("NotFound", { field: "PlatformId", message: `No platform ${input.platformId}` });
    }
    const keyHash = hashKey(value);
    const taken = await tx.selectFrom("access_keys").select("id").where("key_hash", "=", keyHash).executeTakeFirst();
    if (taken) throw refuse("AlreadyExists", { field: "AccessKey", message: "That key value is already in use" });
    const row = await tx
      .insertInto("access_keys")
      .values({
        person_id: input.personId,
        key_hash: keyHash,
        platform_id: input.platformId ?? null,
        comment: input.comment ?? null,
        created_at: runtime.clock.nowMs(),
        expires_at: input.expiresAt?.getTime() ?? null,
        revoked_at: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    return { id: row.id, accessKey: value };
  });
}

/** A key as listed to operators: never its value, which is not stored. */
export interface KeyListing {
  readonly id: number;
  readonly personId: number;
  readonly role: Role;
  readonly email: string;
  readonly platformId: number | null;
  readonly comment: string | null;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}

export async function listKeys(runtime: Runtime, personId?: number): Promise<KeyListing[]> {
  let query = dbOf(runtime)
    .selectFrom("access_keys as k")
    .innerJoin("persons as p", "p.id", "k.person_id")
    .select([
      "k.id",
      "k.person_id",
      "p.role",
      "p.email",
      "k.platform_id",
      "k.comment",
      "k.created_at",
      "k.expires_at",
      "k.revoked_at",
    ])
    .orderBy("k.id");
  if (personId !== undefined) query = query.where("k.person_id", "=", personId);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: row.id,
    personId: row.person_id,
    role: row.role,
    email: row.email,
    platformId: row.platform_id,
    comment: row.comment,
    createdAt: new Date(row.created_at),
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
  }));
}

/** Revokes a key; revoking a revoked key is a no-op that keeps the first revocation time. */
export async function revokeKey(runtime: Runtime, id: number): Promise<{ readonly revokedAt: Date }> {
  return changingKeys(runtime, async ({ tx }) => {
    const row = await tx.selectFrom("access_keys").select("revoked_at").where("id", "=", id).executeTakeFirst();
    if (!row) throw refuse("NotFound", { field: "Id", message: `No key ${id}` });
    if (row.revoked_at !== null) return { revokedAt: new Date(row.revoked_at) };
    const now = runtime.clock.nowMs();
    await tx.updateTable("access_keys").set({ revoked_at: now }).where("id", "=", id).execute();
    return { revokedAt: new Date(now) };
  });
}
