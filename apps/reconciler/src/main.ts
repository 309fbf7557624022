import 'reflect-metadata';
import { runMain, startService } from '#service-kit';
import { ReconcilerModule } from './app.module.js';
import { loadReconcilerConfig } from './config.js';

runMain('reconciler', async () => {
  const config = loadReconcilerConfig();
  await startService(ReconcilerModule.forRoot(config), {
    name: 'reconciler',
    port: config.PORT,
    bindAddress: config.BIND_ADDRESS,
    logLevel: config.LOG_LEVEL,
  });
});
