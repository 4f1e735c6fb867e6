/** Sets of ids by key, as the in-memory indexes of a book keep them: an emptied set goes. */
export function addId<K, I>(index: Map<K, Set<I>>, key: K, id: I): void {
  const ids = index.get(key);
  if (ids) ids.add(id);
  else index.set(key, new Set([id]));
}

export function removeId<K, I>(index: Map<K, Set<I>>, key: K, id: I): void {
  const ids = index.get(key);
  if (!ids) return;
  ids.delete(id);
  if (ids.size === 0) index.delete(key);
}
