/**
 * The service's clock. Domain code reads time only from a Clock so that tests
 * and the sandbox can move it; the only reader of the machine's time is the
 * `systemNow` function handed in at start-up.
 */
export interface Clock {
  now(): Date;
}

/** A persisted clock setting: follow the machine, or stand still at an instant. */
export type ClockSetting = { readonly kind: "system" } | { readonly kind: "fixed"; readonly atMs: number };

/**
 * A clock that follows the machine's time until it is set; once set it stands
 * still at that instant and moves only when advanced, so sandbox scenarios are
 * reproducible.
 */
export class ControllableClock implements Clock {
  #setting: ClockSetting;

  constructor(
    private readonly systemNow: () => number,
    setting: ClockSetting = { kind: "system" },
  ) {
    this.#setting = setting;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  nowMs(): number {
    return this.#setting.kind === "fixed" ? this.#setting.atMs : this.systemNow();
  }

  /** Real time whatever the setting: for leases between processes, which a frozen sandbox clock must not stop. */
  realNowMs(): number {
    return this.systemNow();
  }

  get setting(): ClockSetting {
    return this.#setting;
  }

  apply(setting: ClockSetting): void {
    this.#setting = setting;
  }

  /** The setting that results from advancing by `seconds` from now. */
  advancedBy(seconds: number): ClockSetting {
    return { kind: "fixed", atMs: this.nowMs() + Math.round(seconds * 1000) };
  }
}
