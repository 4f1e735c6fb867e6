import type { Logger } from "pino";

/**
 * Work done in passes on the service clock: a pass every `intervalMs` of
 * real time (the machine's, so a standing sandbox clock does not stop it),
 * one at a time, and on demand (the sandbox runs one after moving the
 * clock). A pass that fails is logged and the next tick takes up what it
 * left: each pass must write whole or not at all, and be safe to repeat.
 * Stopping aborts the signal the pass is given, so a pass waiting on the
 * network may cut its requests short.
 */
export class PassScheduler<Pass extends object> {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<Pass> | undefined;
  readonly #stop = new AbortController();

  constructor(
    private readonly name: string,
    private readonly pass: (stopping: AbortSignal) => Promise<Pass>,
    private readonly idle: Pass,
    private readonly logger: Logger,
    private readonly options: {
      readonly intervalMs: number;
      /** Whether a pass did something worth a log line. */
      readonly worthLogging?: (pass: Pass) => boolean;
    },
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0) return;
    this.#timer = setInterval(() => {
      this.run().catch(() => undefined);
    }, this.options.intervalMs);
    this.#timer.unref();
  }

  /** One pass now, after the one running (if any) ends. */
  async run(): Promise<Pass> {
    while (this.#running) await this.#running.catch(() => undefined);
    if (this.#stop.signal.aborted) return this.idle;
    const pass = this.pass(this.#stop.signal);
    this.#running = pass;
    try {
      const result = await pass;
      if (this.options.worthLogging?.(result))
        this.logger.info({ ...result } as Record<string, unknown>, `${this.name} pass`);
      return result;
    } catch (error) {
      this.logger.error({ err: error }, `${this.name} pass failed; taken up at the next tick`);
      throw error;
    } finally {
      this.#running = undefined;
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    if (this.#timer) clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
  }
}
