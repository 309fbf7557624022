import 'reflect-metadata';
import { runMain, startService } from '#service-kit';
import { WebhookModule } from './app.module.js';
import { loadWebhookConfig } from './config.js';

runMain('webhook', async () => {
  const config = loadWebhookConfig();
  await startService(WebhookModule.forRoot(config), {
    name: 'webhook',
    port: config.PORT,
    bindAddress: config.BIND_ADDRESS,
    logLevel: config.LOG_LEVEL,
  });
});
