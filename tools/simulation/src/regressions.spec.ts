import { OPEN, REGRESSIONS, replay } from './regressions.js';

describe('accounting regressions', () => {
  it.each(Object.entries(REGRESSIONS))('%s', async (_name, regression) => {
    expect(await replay(regression)).toEqual([]);
  });
});

describe('open product bugs (each still fails as stated until fixed)', () => {
  it.each(Object.entries(OPEN))('%s', async (_name, open) => {
    expect(await replay({ ...open, undone: [], shows: [] })).toEqual([expect.stringContaining(open.fails)]);
  });
});
