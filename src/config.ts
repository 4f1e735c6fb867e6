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

export function readConfig(env: Env): Config {
  return {
    host: env.HOST || "127.0.0.1",
    ports: {
      WL: port(env, "WL_PORT", DEFAULT_PORTS.WL),
      GEN: port(env, "GEN_PORT", DEFAULT_PORTS.GEN),
      GEO: port(env, "GEO_PORT", DEFAULT_PORTS.GEO),
      LEGACY: port(env, "LEGACY_PORT", DEFAULT_PORTS.LEGACY),
    },
    dataDir: env.DATA_DIR || "./data",
    databaseUrl: env.DATABASE_URL || undefined,
    bootstrapAdminKey: env.BOOTSTRAP_ADMIN_KEY || undefined,
    sandbox: env.SANDBOX === undefined || env.SANDBOX === "" ? env.NODE_ENV !== "production" : flag(env, "SANDBOX"),
    demo: env.DEMO !== undefined && env.DEMO !== "" && flag(env, "DEMO"),
    rateLimit: {
      max: positiveInt(env, "RATE_LIMIT_MAX", 600),
      windowSeconds: positiveInt(env, "RATE_LIMIT_WINDOW_SECONDS", 60),
    },
    logLevel: env.LOG_LEVEL || "info",
    marketFeed: parseMarketFeed(env.MARKET_FEED),
  };
}

function port(env: Env, name: string, fallback: number): number {
  const value = positiveInt(env, name, fallback);
  if (value > 65535) throw new Error(`${name} must be a port number, got ${env[name]}`);
  return value;
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return Number(raw);
}

function flag(env: Env, name: string): boolean {
  const raw = (env[name] ?? "").toLowerCase();
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new Error(`${name} must be 1 or 0, got ${env[name]}`);
}
