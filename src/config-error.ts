/**
 * A setting the service cannot start with. Its message names the variable and
 * what is wrong, and start-up prints it as one line (no stack: the operator
 * fixes a setting, not the code).
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable} ${problem}`);
    this.name = "ConfigError";
  }
}
