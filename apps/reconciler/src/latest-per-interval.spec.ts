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
    schedule = new LatestPerInterval(10_000, async (key, value, at) => {
      writes.push(`${key}=${value} at ${at.toISOString().slice(11, 19)}`);
      return succeed;
    });
  });

  afterEach(() => {
    schedule.stop();
    jest.useRealTimers();
  });

  const settle = () => jest.advanceTimersByTimeAsync(0);

  it('writes a first value at once, and an unchanged one never again', async () => {
    schedule.offer('ns', 'a', 'A');
    await settle();
    await jest.advanceTimersByTimeAsync(60_000);
    schedule.offer('ns', 'a again', 'A');
    await settle();
    expect(writes).toEqual(['ns=a at 08:00:00']);
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

  it('writes nothing that waited once stopped', async () => {
    schedule.offer('ns', 'a', 'A');
    schedule.offer('ns', 'b', 'B');
    schedule.stop();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(writes).toEqual(['ns=a at 08:00:00']);
  });
});
