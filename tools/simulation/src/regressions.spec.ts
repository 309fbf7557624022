import { OPEN, REGRESSIONS, replay } from './regressions.js';

describe('accounting regressions', () => {
  it.each(Object.entries(REGRESSIONS))('%s', async (_name, regression) => {
    expect(await replay(regression)).toEqual([]);
  });
});

const open = Object.entries(OPEN);
(open.length > 0 ? describe : describe.skip)(
  'open product bugs (each still fails as stated until fixed)',
  () => {
    it.each(open.length > 0 ? open : [['none', undefined!]])('%s', async (_name, open) => {
      expect(await replay({ ...open, undone: [], shows: [] })).toEqual([expect.stringContaining(open.fails)]);
    });
  },
);
