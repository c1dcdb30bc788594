/**
 * A tiny seeded PRNG (mulberry32), floats in [0, 1): benchmark datasets must be identical on
 * every run and machine, and a randomized test's failure must replay from its seed, so
 * `Math.random` will not do.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
