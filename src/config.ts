import { existsSync, statSync } from "node:fs";
import { ConfigError } from "./config-error.js";
import { isWellFormedKey } from "./core/keys.js";
import { type MarketFeed, parseMarketFeed } from "./engine/market-data.js";

/** The service's configuration, read once from the environment at start-up. */
export interface Config {
  readonly host: string;
  readonly ports: { readonly WL: number; readonly GEN: number; readonly GEO: number; readonly LEGACY: number };
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly bootstrapAdminKey: string | undefined;
  readonly sandbox: boolean;
  /** Fill an empty database with demo data at start. */
  readonly demo: boolean;
  readonly rateLimit: RateLimitConfig;
  /** The legacy server's own budget per key, in the same window. */
  readonly legacyRateLimit: RateLimitConfig;
  readonly logLevel: string;
  readonly marketFeed: MarketFeed;
}

export interface RateLimitConfig {
  /** Requests allowed per key (or per address without a key) in one window. */
  readonly max: number;
  readonly windowSeconds: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The ports the servers listen on unless WL_PORT, GEN_PORT, GEO_PORT or LEGACY_PORT say otherwise. */
export const DEFAULT_PORTS = { WL: 8081, GEN: 8082, GEO: 8083, LEGACY: 8084 } as const;

/** pino's levels, and silent. */
const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/** Reads and checks every setting: a bad one throws a ConfigError naming it. */
export function readConfig(env: Env): Config {
  const windowSeconds = positiveInt(env, "RATE_LIMIT_WINDOW_SECONDS", 60);
  const ports = {
    WL: port(env, "WL_PORT", DEFAULT_PORTS.WL),
    GEN: port(env, "GEN_PORT", DEFAULT_PORTS.GEN),
    GEO: port(env, "GEO_PORT", DEFAULT_PORTS.GEO),
    LEGACY: port(env, "LEGACY_PORT", DEFAULT_PORTS.LEGACY),
  };
  return {
    host: env.HOST || "127.0.0.1",
    ports: distinct(ports),
    dataDir: env.DATA_DIR || "./data",
    databaseUrl: databaseUrl(env),
    bootstrapAdminKey: bootstrapAdminKey(env),
    sandbox: env.SANDBOX === undefined || env.SANDBOX === "" ? env.NODE_ENV !== "production" : flag(env, "SANDBOX"),
    demo: env.DEMO !== undefined && env.DEMO !== "" && flag(env, "DEMO"),
    rateLimit: { max: positiveInt(env, "RATE_LIMIT_MAX", 600), windowSeconds },
    legacyRateLimit: { max: positiveInt(env, "LEGACY_RATE_LIMIT_MAX", 6000), windowSeconds },
    logLevel: logLevel(env),
    marketFeed: marketFeed(env),
  };
}

/** A key as every key is written; the value is a secret, so the refusal never repeats it. */
function bootstrapAdminKey(env: Env): string | undefined {
  const key = env.BOOTSTRAP_ADMIN_KEY || undefined;
  if (key !== undefined && !isWellFormedKey(key)) {
    throw new ConfigError("BOOTSTRAP_ADMIN_KEY", "must be 16 to 200 characters of letters, digits and ._~+/=-");
  }
  return key;
}

function port(env: Env, name: string, fallback: number): number {
  const value = positiveInt(env, name, fallback);
  if (value > 65535) throw new ConfigError(name, `must be a port number from 1 to 65535, got ${env[name]}`);
  return value;
}

function distinct<T extends Record<string, number>>(ports: T): T {
  const seen = new Map<number, string>();
  for (const [server, value] of Object.entries(ports)) {
    const other = seen.get(value);
    if (other) throw new ConfigError(`${server}_PORT`, `must differ from ${other}_PORT, both are ${value}`);
    seen.set(value, server);
  }
  return ports;
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1) throw new ConfigError(name, `must be a positive integer, got ${raw}`);
  return Number(raw);
}

function flag(env: Env, name: string): boolean {
  const raw = (env[name] ?? "").toLowerCase();
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(name, `must be 1 or 0, got ${env[name]}`);
}

function logLevel(env: Env): string {
  const level = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(level)) {
    throw new ConfigError("LOG_LEVEL", `must be one of ${LOG_LEVELS.join(", ")}, got ${level}`);
  }
  return level;
}

/** Only the scheme is checked here; whether the server and database answer is checked when storage opens. */
function databaseUrl(env: Env): string | undefined {
  const raw = env.DATABASE_URL || undefined;
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("DATABASE_URL", "is not a URL such as postgres://user@host:5432/database");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    // The scheme only: the rest may hold a password.
    throw new ConfigError(
      "DATABASE_URL",
      `must be a postgres:// or postgresql:// URL (unset it for embedded SQLite in DATA_DIR), got a ${url.protocol}// URL`,
    );
  }
  return raw;
}

function marketFeed(env: Env): MarketFeed {
  const feed = parseMarketFeed(env.MARKET_FEED);
  if (feed.kind === "replay" && !(existsSync(feed.file) && statSync(feed.file).isFile())) {
    throw new ConfigError("MARKET_FEED", `names a replay file that does not exist: ${feed.file}`);
  }
  return feed;
}
