import { REGRESSIONS, replay } from './regressions.js';

describe('accounting regressions', () => {
  it.each(Object.entries(REGRESSIONS))('%s', async (_name, regression) => {
    expect(await replay(regression)).toEqual([]);
  });
});
