import { hash, randomBytes } from "node:crypto";

/**
 * Access key values. Keys carry 256 random bits, so a fast hash is enough to
 * store them: there is nothing for a slow hash to protect against guessing.
 */
const KEY_FORMAT = /^[A-Za-z0-9._~+/=-]{16,200}$/;

export const isWellFormedKey = (value: string): boolean => KEY_FORMAT.test(value);

export const newKeyValue = (): string => randomBytes(32).toString("base64url");

export const hashKey = (value: string): string => hash("sha256", value, "hex");
