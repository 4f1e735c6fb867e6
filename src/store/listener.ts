import type pg from "pg";

/** Called with false when a listening connection is lost and with true when it listens again. */
export type OnListening = (listening: boolean) => void;

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;

/**
 * The PostgreSQL LISTEN connections of one storage. Each listens on a
 * connection of its own and comes back by itself when that connection is
 * lost: whoever relies on its notifications hears `onListening(false)` at once
 * (what is sent meanwhile is never delivered) and `onListening(true)` once it
 * listens again. Closing stops them all, including any still connecting.
 */
export class Listeners {
  readonly #stops = new Set<() => Promise<void>>();
  #closed = false;

  constructor(private readonly connect: () => pg.Client) {}

  /** Listens on `channel` and answers how to stop; a failure of the first connection is thrown. */
  async listen(
    channel: string,
    onMessage: (payload: string) => void,
    onListening?: OnListening,
  ): Promise<() => Promise<void>> {
    if (this.#closed) throw new Error("storage is closed");
    /** The connection listening, or being opened to listen. */
    let current: pg.Client | null = null;
    /** Set once the first connection listens; losses before that are the first attempt's failure. */
    let ready = false;
    let listening = false;
    let stopped = false;
    let retryMs = FIRST_RETRY_MS;
    let retry: NodeJS.Timeout | null = null;

    const open = async (): Promise<void> => {
      const next = this.connect();
      current = next;
      // Without a listener, an 'error' event (the server ending the connection) would crash the process.
      next.on("error", () => lost(next));
      next.on("end", () => lost(next));
      next.on("notification", (message) => {
        if (message.channel === channel) onMessage(message.payload ?? "");
      });
      await next.connect();
      await next.query(`listen ${channel}`);
      if (current !== next) throw new Error(`lost the connection while listening on ${channel}`);
    };
    const lost = (which: pg.Client) => {
      if (which !== current) return;
      current = null;
      which.end().catch(() => undefined);
      if (stopped || !ready) return;
      if (listening) {
        listening = false;
        onListening?.(false);
      }
      if (retry === null) schedule();
    };
    const schedule = () => {
      retry = setTimeout(() => {
        retry = null;
        if (stopped) return;
        open().then(
          () => {
            if (stopped) return;
            retryMs = FIRST_RETRY_MS;
            listening = true;
            onListening?.(true);
          },
          () => {
            if (current) lost(current);
            else if (!stopped && retry === null) schedule();
          },
        );
      }, retryMs);
      retry.unref();
      retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
    };
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      this.#stops.delete(stop);
      if (retry) clearTimeout(retry);
      const last = current;
      current = null;
      await last?.end().catch(() => undefined);
    };

    this.#stops.add(stop);
    try {
      await open();
    } catch (error) {
      await stop();
      throw error;
    }
    if (stopped) throw new Error("storage is closed");
    ready = true;
    listening = true;
    return stop;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#stops].map((stop) => stop()));
  }
}
