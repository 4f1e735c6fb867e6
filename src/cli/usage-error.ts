/** A wrong or missing command-line option: exit code 2 and the usage text. */
export class UsageError extends Error {}
