import type { LegacyCommand } from "./command.js";
import { desiredPositionCommands } from "./commands/desired.js";
import { recordCommands } from "./commands/records.js";
import { signalCommands } from "./commands/signals.js";
import { subscriberCommands } from "./commands/subscribers.js";
import { systemCommands } from "./commands/systems.js";

/** The legacy v3 commands by name, answered by the same services as v4. */
export const LEGACY_COMMANDS: readonly LegacyCommand[] = [
  ...signalCommands,
  ...recordCommands,
  ...systemCommands,
  ...desiredPositionCommands,
  ...subscriberCommands,
];
