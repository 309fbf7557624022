import 'reflect-metadata';
import { serviceMain } from '#service-kit';
import { ConsoleModule } from './app.module.js';
import { loadConsoleConfig } from './config.js';

serviceMain(
  'console',
  () => loadConsoleConfig(),
  (config) => ConsoleModule.forRoot(config),
);
