// TEMPORARY profiling harness (not to be committed)
import { join } from "node:path";
import autocannon from "autocannon";
import {
  ADMIN_KEY,
  apiCall,
  createStrategies,
  freePorts,
  HOST,
  JSON_HEADERS,
  MARKET_OPEN_ISO,
  runBench,
  startChild,
  stopChild,
  tempDir,
  waitUntilAnswering,
} from "./support.js";

await runBench(async () => {
  const dir = await tempDir("prof-");
  const ports = await freePorts(4);
  const [wl, gen, geo, legacy] = ports as [number, number, number, number];
  const mode = process.env.MODE ?? "resting";
  const env = {
    ...process.env,
    HOST,
    WL_PORT: String(wl),
    GEN_PORT: String(gen),
    GEO_PORT: String(geo),
    LEGACY_PORT: String(legacy),
    DATA_DIR: join(dir, "data"),
    BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
    RATE_LIMIT_MAX: "100000000",
    SANDBOX: "1",
    MARKET_FEED: "simulated",
  };
  delete (env as Record<string, unknown>).LOG_LEVEL;
  const child = startChild(
    "service",
    ["--cpu-prof", "--cpu-prof-dir", "/tmp/prof", "--import", "tsx", "src/main.ts"],
    env,
    join(dir, "log"),
  );
  await waitUntilAnswering(
    "service",
    child,
    `http://${HOST}:${gen}/General/Hello`,
    { method: "POST", headers: JSON_HEADERS, body: "{}" },
    (s) => s === 200,
  );
  await apiCall(gen, "POST", "/Sandbox/SetClock", { Now: MARKET_OPEN_ISO });
  const ids = await createStrategies(gen, 100, "P");
  if (mode === "filling")
    await apiCall(gen, "POST", "/Sandbox/SetQuote", { Symbol: "AAPL", Bid: 480.72, Ask: 480.73, Last: 480.72 });
  let next = 0;
  const path = mode === "hello" ? "/General/Hello" : "/Strategies/NewStrategyOrder";
  const body = (id: number) =>
    mode === "hello"
      ? JSON.stringify({ Name: "Bob" })
      : JSON.stringify({
          Order: {
            StrategyId: id,
            OrderType: mode === "filling" ? "1" : "2",
            Side: "1",
            TIF: "1",
            OrderQuantity: 1,
            ...(mode === "filling" ? {} : { Limit: 1 }),
            ServiceSymbol: { FullSymbol: "AAPL" },
          },
        });
  const result = await autocannon({
    url: `http://${HOST}:${gen}${path}`,
    method: "POST",
    headers: JSON_HEADERS,
    connections: Number(process.env.CONN ?? 50),
    duration: Number(process.env.SECS ?? 8),
    requests: [
      { method: "POST", path, setupRequest: (r) => ({ ...r, body: body(ids[next++ % ids.length] as number) }) },
    ],
  });
  console.log(mode, "req/s", result.requests.average, "p99", result.latency.p99, "non2xx", result.non2xx);
  await stopChild(child);
});
