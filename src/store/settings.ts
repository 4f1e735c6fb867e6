import type { Tx } from "./transaction.js";

/** Small named values the service keeps across restarts (clock setting, cursor secret). */
export async function readSetting(tx: Tx, name: string): Promise<string | undefined> {
  const row = await tx.selectFrom("service_settings").select("value").where("name", "=", name).executeTakeFirst();
  return row?.value;
}

export async function writeSetting(tx: Tx, name: string, value: string): Promise<void> {
  await tx
    .insertInto("service_settings")
    .values({ name, value })
    .onConflict((oc) => oc.column("name").doUpdateSet({ value }))
    .execute();
}

/** Stores `value` unless the setting exists; returns whichever value is stored. */
export async function settingOrInit(tx: Tx, name: string, value: string): Promise<string> {
  await tx
    .insertInto("service_settings")
    .values({ name, value })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  return (await readSetting(tx, name)) ?? value;
}
