import type { App } from "./app.js";
import type { Config } from "./config.js";
import type { MarketFeed } from "./engine/market-data.js";
import { describeLocation } from "./store/location.js";
import { appliedMigrations } from "./store/migrate.js";
import type { Storage } from "./store/storage.js";

/**
 * What the start-up log line says, so an operator sees at a glance what runs:
 * storage and where (never a password), the migrations applied, the market
 * feed, the sandbox and whether its clock stands still, and the ports.
 */
export async function startupFacts(config: Config, storage: Storage, app: App) {
  const migrations = await appliedMigrations(storage);
  const clock = app.runtime.clock.setting;
  return {
    storage: storage.backend,
    location: await describeLocation(storage),
    migrations: { applied: migrations.length, latest: migrations.at(-1) ?? null },
    marketFeed: feedName(config.marketFeed),
    sandbox: config.sandbox,
    clock: clock.kind === "fixed" ? { frozen: true, at: new Date(clock.atMs).toISOString() } : { frozen: false },
    host: config.host,
    ports: config.ports,
  };
}

const feedName = (feed: MarketFeed): string => (feed.kind === "replay" ? `replay:${feed.file}` : feed.kind);
