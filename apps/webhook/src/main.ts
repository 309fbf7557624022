import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { serviceMain } from '#service-kit';
import { WebhookModule } from './app.module.js';
import { loadWebhookConfig } from './config.js';

serviceMain(
  'webhook',
  () => loadWebhookConfig(),
  (config) => WebhookModule.forRoot(config),
  (config) => ({
    tls: { key: readFileSync(config.TLS_KEY_FILE, 'utf8'), cert: readFileSync(config.TLS_CERT_FILE, 'utf8') },
    // Kubernetes caps a request body at 3 MiB; an AdmissionReview carries the object and the old one.
    bodyLimitBytes: 7 * 1024 * 1024,
  }),
);
