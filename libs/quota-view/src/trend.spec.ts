import { sparkline, type TrendSample } from './trend.js';

const window = { from: 0, to: 1000 };
const size = { width: 100, height: 20 };
const at = (time: number, percent: number): TrendSample => ({ at: time, percent });

describe('sparkline', () => {
  it.each([
    { name: 'no samples draw nothing', samples: [], points: '', ceiling: 100 },
    {
      name: 'one sample is a level line to the end of the window',
      samples: [at(500, 50)],
      points: '50,10 100,10',
      ceiling: 100,
    },
    {
      name: 'empty to full across the window, a pixel inside the edges',
      samples: [at(0, 0), at(1000, 100)],
      points: '0,19 100,1',
      ceiling: 100,
    },
    {
      name: 'samples are drawn in time order whatever order they come in',
      samples: [at(1000, 25), at(0, 75), at(500, 50)],
      points: '0,5.5 50,10 100,14.5',
      ceiling: 100,
    },
    {
      name: 'samples outside the window, or not numbers, are left out',
      samples: [at(-1, 90), at(250, 10), at(1001, 90), at(600, Number.NaN), at(750, 30)],
      points: '25,17.2 75,13.6',
      ceiling: 100,
    },
    {
      name: 'over the limit raises the top so the line still fits',
      samples: [at(0, 100), at(1000, 200)],
      points: '0,10 100,1',
      ceiling: 200,
    },
    {
      name: 'rounded to a tenth of a pixel',
      samples: [at(0, 33.33), at(333, 66.66)],
      points: '0,13 33.3,7',
      ceiling: 100,
    },
  ])('$name', ({ samples, points, ceiling }) => {
    expect(sparkline(samples, window, size)).toMatchObject({ points, ceiling });
  });

  it('tells the first and last samples of the window', () => {
    const line = sparkline([at(900, 40), at(-5, 1), at(100, 10)], window, size);
    expect([line.first, line.last]).toEqual([at(100, 10), at(900, 40)]);
  });
});
