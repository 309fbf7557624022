import { KeyQueue } from './key-queue.js';

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('KeyQueue', () => {
  it('syncs each key once however often it is added while waiting, one at a time', async () => {
    const synced: string[] = [];
    let inFlight = 0;
    let most = 0;
    const queue = new KeyQueue(
      async (key) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await settle();
        synced.push(key);
        inFlight--;
      },
      () => 1,
    );
    queue.add('a');
    queue.add('b');
    queue.add('b');
    queue.add('a');
    await settle();
    await settle();
    await settle();
    expect(synced).toEqual(['a', 'b', 'a']);
    expect(most).toBe(1);
  });

  it('tries a failed sync again after the delay its failure handler gives', async () => {
    const attempts: string[] = [];
    const failures: unknown[] = [];
    const queue = new KeyQueue(
      async (key) => {
        attempts.push(key);
        if (attempts.length === 1) throw new Error('conflict');
      },
      (_key, err) => {
        failures.push(err);
        return 5;
      },
    );
    queue.add('a');
    await settle();
    expect(attempts).toEqual(['a', 'a']);
    expect(failures).toHaveLength(1);
  });

  it('starts nothing once stopped', async () => {
    const synced: string[] = [];
    const queue = new KeyQueue(
      async (key) => void synced.push(key),
      () => 1,
    );
    queue.stop();
    queue.add('a');
    await settle();
    expect(synced).toEqual([]);
  });
});
