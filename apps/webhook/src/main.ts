import 'reflect-metadata';
import { jsonLogger, serviceMain } from '#service-kit';
import { WebhookModule } from './app.module.js';
import { loadWebhookConfig } from './config.js';

serviceMain(
  'webhook',
  () => loadWebhookConfig(),
  (config) => WebhookModule.forRoot(config),
  (config) => {
    if (!config.CLIENT_CA_FILE)
      jsonLogger('webhook', config.LOG_LEVEL).warn(
        'CLIENT_CA_FILE is not set: anything that can reach this port can post AdmissionReviews and ' +
          "hold a team's quota with forged reservations, so only a NetworkPolicy (the chart's default) " +
          'keeps other callers out. To harden it, set CLIENT_CA_FILE to the CA of the client ' +
          'certificate the Karmada API server presents to webhooks (docs/operating/security.md).',
      );
    return {
      tls: {
        keyFile: config.TLS_KEY_FILE,
        certFile: config.TLS_CERT_FILE,
        clientCaFile: config.CLIENT_CA_FILE,
        clientNames: config.CLIENT_CERT_ALLOWED_NAMES,
        reloadSeconds: config.TLS_RELOAD_SECONDS,
      },
      // Kubernetes caps a request body at 3 MiB; an AdmissionReview carries the object and the old one.
      bodyLimitBytes: 7 * 1024 * 1024,
    };
  },
);
