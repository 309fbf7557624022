import { addDenial, denialEvent } from './denial-events.js';

const exceeded = 'exceeded quota: compute, requested: cpu=2, used: cpu=9, limited: cpu=10';

describe('addDenial', () => {
  it('counts from one and keeps the latest binding and message', () => {
    const first = addDenial(undefined, 'web-1', 'first');
    expect(first).toEqual({ count: 1, latestBinding: 'web-1', latestMessage: 'first' });
    expect(addDenial(first, 'web-2', 'second')).toEqual({
      count: 2,
      latestBinding: 'web-2',
      latestMessage: 'second',
    });
  });
});

describe('denialEvent', () => {
  it.each([
    [1, `denied ResourceBinding web-7: ${exceeded}`],
    [2, `denied ResourceBinding web-7 and 1 more within 10s: ${exceeded}`],
    [37, `denied ResourceBinding web-7 and 36 more within 10s: ${exceeded}`],
  ])('%s denials in a window make one Warning event: %s', (count, message) => {
    expect(denialEvent({ count, latestBinding: 'web-7', latestMessage: exceeded }, 10)).toEqual({
      type: 'Warning',
      reason: 'AdmissionDenied',
      message,
      count,
    });
  });

  it.each<['Warn' | 'DryRun']>([['Warn'], ['DryRun']])(
    'a %s quota’s Event says it admitted what it would deny',
    (enforcement) => {
      expect(
        denialEvent({ count: 2, latestBinding: 'web-7', latestMessage: exceeded }, 10, enforcement),
      ).toEqual({
        type: 'Warning',
        reason: 'AdmissionNotEnforced',
        message: `admitted ResourceBinding web-7 and 1 more within 10s, which it would deny (spec.enforcement: ${enforcement}, not enforced): ${exceeded}`,
        count: 2,
      });
    },
  );

  it('cuts a message past 1024 characters', () => {
    const event = denialEvent({ count: 1, latestBinding: 'web', latestMessage: 'x'.repeat(5000) }, 10);
    expect(event.message).toHaveLength(1024);
    expect(event.message.endsWith('...')).toBe(true);
  });
});
