/**
 * Runs `work` over `items` with at most `concurrency` in flight, in order of start; stops taking
 * new items once `shouldStop` says so (a deadline, a dead instance).
 */
export async function runBounded<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
  shouldStop: () => boolean = () => false,
): Promise<number> {
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < items.length && !shouldStop()) {
      const index = next++;
      await work(items[index]!, index);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done;
}
