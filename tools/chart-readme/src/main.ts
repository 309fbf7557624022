import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { repoRoot } from '../../federation/src/paths.js';
import { type ChartSchema, valueRows, valuesTable, withValuesTable } from './values-table.js';

/** Rewrites the values table of charts/karmada-quota/README.md; then run prettier on it. */
const chart = join(repoRoot(), 'charts', 'karmada-quota');
const schema = JSON.parse(readFileSync(join(chart, 'values.schema.json'), 'utf8')) as ChartSchema;
const values = yaml.load(readFileSync(join(chart, 'values.yaml'), 'utf8'));
const readmePath = join(chart, 'README.md');
writeFileSync(
  readmePath,
  withValuesTable(readFileSync(readmePath, 'utf8'), valuesTable(valueRows(schema, values))),
);
console.log(`wrote ${readmePath}`);
