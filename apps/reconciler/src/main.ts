import 'reflect-metadata';
import { serviceMain } from '#service-kit';
import { ReconcilerModule } from './app.module.js';
import { loadReconcilerConfig } from './config.js';

serviceMain(
  'reconciler',
  () => loadReconcilerConfig(),
  (config) => ReconcilerModule.forRoot(config),
);
