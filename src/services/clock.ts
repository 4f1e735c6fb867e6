import type { ClockSetting, ControllableClock } from "../core/clock.js";
import { readSetting, writeSetting } from "../store/settings.js";
import type { Storage } from "../store/storage.js";

const CLOCK_SETTING = "clock";

/** The clock setting stored by an earlier SetClock, so a restart keeps sandbox time. */
export async function loadClockSetting(storage: Storage): Promise<ClockSetting> {
  const raw = await readSetting(storage.db, CLOCK_SETTING);
  if (raw === undefined) return { kind: "system" };
  const parsed = JSON.parse(raw) as ClockSetting;
  return parsed.kind === "fixed" && Number.isFinite(parsed.atMs) ? parsed : { kind: "system" };
}

export async function applyClockSetting(
  storage: Storage,
  clock: ControllableClock,
  setting: ClockSetting,
): Promise<Date> {
  await writeSetting(storage.db, CLOCK_SETTING, JSON.stringify(setting));
  clock.apply(setting);
  return clock.now();
}
