import 'reflect-metadata';
import { runMain, startService } from '#service-kit';
import { AggregatorModule } from './app.module.js';
import { loadAggregatorConfig } from './config.js';

runMain('aggregator', async () => {
  const config = loadAggregatorConfig();
  await startService(AggregatorModule.forRoot(config), {
    name: 'aggregator',
    port: config.PORT,
    bindAddress: config.BIND_ADDRESS,
    logLevel: config.LOG_LEVEL,
  });
});
