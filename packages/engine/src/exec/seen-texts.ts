/**
 * Which texts were asked recently, by a hash of each in a fixed table (16 KiB): the plan cache
 * keeps a text's plan only when the text comes a second time while its hash is still here, so
 * a stream of texts each asked once (every id of a table, say) never churns the cache with
 * plans that are not asked again. A collision only lets a text in early, or keeps it out once.
 */
export class SeenTexts {
  readonly #hashes = new Int32Array(SLOTS);

  /** Whether `text` was seen since its slot last changed; records it as seen either way. */
  seenAgain(text: string): boolean {
    const hash = textHash(text);
    const slot = hash & (SLOTS - 1);
    if (this.#hashes[slot] === hash) return true;
    this.#hashes[slot] = hash;
    return false;
  }
}

const SLOTS = 4096;
/** Characters hashed at each end: enough to tell queries apart, bounded for a long text. */
const ENDS = 64;

/** FNV-1a over the length and both ends of `text`, never 0 (an empty slot). */
function textHash(text: string): number {
  let hash = 0x811c9dc5 ^ text.length;
  const head = Math.min(text.length, ENDS);
  for (let i = 0; i < head; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  for (let i = Math.max(head, text.length - ENDS); i < text.length; i++)
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash | 1;
}
