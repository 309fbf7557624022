import 'reflect-metadata';
import { serviceMain } from '#service-kit';
import { AggregatorModule } from './app.module.js';
import { loadAggregatorConfig } from './config.js';

serviceMain(
  'aggregator',
  () => loadAggregatorConfig(),
  (config) => AggregatorModule.forRoot(config),
);
