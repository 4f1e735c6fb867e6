import type { Static, TObject } from "@sinclair/typebox";
import type { ErrorName } from "../../core/errors.js";
import type { PlatformId } from "../../core/ids.js";
import type { Principal } from "../../services/keys.js";
import type { TradingContext } from "../../services/trading.js";
import { LEGACY_TITLES, type LegacyFailureName } from "./titles.js";

/** Legacy v3 contexts: World (own account), Private Platform (other users' accounts). */
export type LegacyContext = "world" | "platform";

export interface LegacyRequestContext extends TradingContext {
  readonly caller: Principal;
  readonly context: LegacyContext;
  /** The platform named in the path, in Private Platform context. */
  readonly platformId: PlatformId | null;
}

/**
 * A command-level failure: answered with HTTP 200, ok 0 and error {title, message}.
 * Its title comes from the one table of legacy titles (./titles.ts).
 */
export class LegacyFailure extends Error {
  readonly title: string;

  constructor(
    failure: LegacyFailureName,
    message: string,
    /** Extra fields some failures carry beside `error` (e.g. the signal echo). */
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = "LegacyFailure";
    this.title = LEGACY_TITLES[failure];
  }
}

export interface LegacyCommand<Input extends TObject = TObject> {
  readonly name: string;
  readonly contexts: readonly LegacyContext[];
  /** What the command does, for the OpenAPI document (./openapi.ts). */
  readonly summary: string;
  /** The command's fields (API.md part B), read and checked before the handler runs (./input.ts). */
  readonly input: Input;
  /** The fields of a successful answer beside ok (./shapes), for the OpenAPI document. */
  readonly answer: TObject;
  /** Titles of this command's own for some refusals (submitSignal's refused values are "Invalid signal"). */
  readonly refusals?: Readonly<Partial<Record<ErrorName, LegacyFailureName>>>;
  /** Answers the fields of a successful response besides ok. */
  readonly handler: (ctx: LegacyRequestContext, input: Static<Input>) => Promise<Record<string, unknown>>;
}

/** Keeps each command's handler typed by its own input schema inside the one table. */
export const defineLegacyCommand = <Input extends TObject>(command: LegacyCommand<Input>): LegacyCommand =>
  command as unknown as LegacyCommand;
