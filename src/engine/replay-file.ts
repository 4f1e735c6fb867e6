import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { parse } from "csv-parse";
import { type ReplayRead, ReplayReader } from "../core/market/replay.js";

/**
 * A replay file read through a CSV parser as a stream: quoted fields (commas,
 * quotes and line breaks inside them) read as CSV says, and a file of any
 * size is never held whole, only the quotes made of it. Lines starting with
 * `#` and blank lines are skipped; cells are trimmed; a quote record may stop
 * after `last`.
 */
export function readReplayFile(file: string): Promise<ReplayRead> {
  return readReplayStream(createReadStream(file));
}

export async function readReplayStream(input: Readable): Promise<ReplayRead> {
  const reader = new ReplayReader();
  const records = parse({
    comment: "#",
    comment_no_infix: true,
    skip_empty_lines: true,
    trim: true,
    relax_column_count: true,
    info: true,
  });
  // pipe() does not pass the source's errors on (a file that cannot be read).
  input.on("error", (error) => records.destroy(error));
  input.pipe(records);
  try {
    for await (const { record, info } of records as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      reader.record(record, info.lines);
      if (!reader.ok) break;
    }
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  } finally {
    input.destroy();
  }
  return reader.finish();
}
