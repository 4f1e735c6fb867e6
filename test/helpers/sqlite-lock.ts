import Database from "better-sqlite3";

/**
 * Another connection to the SQLite file holding its write lock, as the CLI,
 * an operator's shell or a backup that writes would; the answered function
 * lets it go.
 */
export function holdWriteLock(file: string): () => void {
  const holder = new Database(file);
  holder.exec("begin immediate");
  return () => {
    holder.exec("rollback");
    holder.close();
  };
}
