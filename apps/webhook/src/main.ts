import 'reflect-metadata';
import { serviceMain } from '#service-kit';
import { WebhookModule } from './app.module.js';
import { loadWebhookConfig } from './config.js';

serviceMain(
  'webhook',
  () => loadWebhookConfig(),
  (config) => WebhookModule.forRoot(config),
  (config) => ({
    tls: {
      keyFile: config.TLS_KEY_FILE,
      certFile: config.TLS_CERT_FILE,
      reloadSeconds: config.TLS_RELOAD_SECONDS,
    },
    // Kubernetes caps a request body at 3 MiB; an AdmissionReview carries the object and the old one.
    bodyLimitBytes: 7 * 1024 * 1024,
  }),
);
