import type { LegacyCommand } from "./command.js";

/**
 * The legacy v3 commands by name. They are answered by the same services as
 * v4; the commands themselves arrive with the legacy API issue.
 */
export const LEGACY_COMMANDS: readonly LegacyCommand[] = [];
