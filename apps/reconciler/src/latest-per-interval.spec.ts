import { jest } from '@jest/globals';
import { LatestPerInterval } from './latest-per-interval.js';

describe('LatestPerInterval', () => {
  let writes: string[];
  let succeed: boolean;
  let schedule: LatestPerInterval<string>;

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-11-28T08:00:00Z') });
    writes = [];
    succeed = true;
    schedule = new LatestPerInterval(10_000, 60_000, async (key, value, at) => {
      writes.push(`${key}=${value} at ${at.toISOString().slice(11, 19)}`);
      return succeed;
    });
  });

  afterEach(() => {
    schedule.stop();
    jest.useRealTimers();
  });

  const settle = () => jest.advanceTimersByTimeAsync(0);

  it('writes a first value at once, and an unchanged one again only once it is older than the refresh', async () => {
    schedule.offer('ns', 'a', 'A');
    await settle();
    await jest.advanceTimersByTimeAsync(59_999);
    schedule.offer('ns', 'a again', 'A');
    await settle();
    expect(writes).toEqual(['ns=a at 08:00:00']);
    await jest.advanceTimersByTimeAsync(1);
    schedule.offer('ns', 'a again', 'A');
    await settle();
    expect(writes).toEqual(['ns=a at 08:00:00', 'ns=a again at 08:01:00']);
  });

  it('writes one key one write after the other: an older value never lands after a newer one', async () => {
    const landed: string[] = [];
    const release: (() => void)[] = [];
    const slow = new LatestPerInterval<string>(10_000, 60_000, (_key, value) => {
      writes.push(value);
      return new Promise((resolve) => release.push(() => (landed.push(value), resolve(true))));
    });
    slow.offer('ns', 'a', 'A');
    await jest.advanceTimersByTimeAsync(10_000);
    slow.offer('ns', 'b', 'B'); // the interval has passed, the write of a has not landed
    await settle();
    expect(writes).toEqual(['a']);
    release.shift()!();
    await settle();
    expect(writes).toEqual(['a', 'b']);
    release.shift()!();
    await settle();
    expect(landed).toEqual(['a', 'b']);
    slow.stop();
  });

  it('takes a write that throws for a failed one: written again after the interval', async () => {
    let calls = 0;
    const throwing = new LatestPerInterval<string>(10_000, 60_000, async () => {
      if (++calls === 1) throw new Error('boom');
      return true;
    });
    throwing.offer('ns', 'a', 'A');
    await jest.advanceTimersByTimeAsync(10_000);
    throwing.offer('ns', 'a', 'A');
    await settle();
    throwing.offer('ns', 'a', 'A');
    await settle();
    expect(calls).toBe(2);
    throwing.stop();
  });

  it('holds a change made within the interval until it passes, and writes only the latest', async () => {
    schedule.offer('ns', 'a', 'A');
    await jest.advanceTimersByTimeAsync(3_000);
    schedule.offer('ns', 'b', 'B');
    await jest.advanceTimersByTimeAsync(3_000);
    schedule.offer('ns', 'c', 'C');
    await jest.advanceTimersByTimeAsync(3_999);
    expect(writes).toEqual(['ns=a at 08:00:00']);
    await jest.advanceTimersByTimeAsync(1);
    expect(writes).toEqual(['ns=a at 08:00:00', 'ns=c at 08:00:10']);
  });

  it('writes nothing when what waited is back to what was written', async () => {
    schedule.offer('ns', 'a', 'A');
    await jest.advanceTimersByTimeAsync(1_000);
    schedule.offer('ns', 'b', 'B');
    schedule.offer('ns', 'a', 'A');
    await jest.advanceTimersByTimeAsync(60_000);
    expect(writes).toEqual(['ns=a at 08:00:00']);
  });

  it('keeps keys apart', async () => {
    schedule.offer('one', 'a', 'A');
    schedule.offer('two', 'a', 'A');
    await settle();
    expect(writes).toEqual(['one=a at 08:00:00', 'two=a at 08:00:00']);
  });

  it('after a failed write, writes the next offer again, even unchanged, once the interval has passed', async () => {
    succeed = false;
    schedule.offer('ns', 'a', 'A');
    await settle();
    schedule.offer('ns', 'a', 'A');
    await jest.advanceTimersByTimeAsync(9_999);
    expect(writes).toEqual(['ns=a at 08:00:00']);
    succeed = true;
    await jest.advanceTimersByTimeAsync(1);
    schedule.offer('ns', 'a', 'A');
    await jest.advanceTimersByTimeAsync(60_000);
    expect(writes).toEqual(['ns=a at 08:00:00', 'ns=a at 08:00:10']);
  });

  it('writes nothing that waited, nor anything offered, once stopped', async () => {
    schedule.offer('ns', 'a', 'A');
    schedule.offer('ns', 'b', 'B');
    schedule.stop();
    schedule.offer('other', 'c', 'C');
    await jest.advanceTimersByTimeAsync(60_000);
    expect(writes).toEqual(['ns=a at 08:00:00']);
  });
});
