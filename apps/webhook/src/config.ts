import { loadConfig, serviceEnv } from '#service-kit';

export const webhookEnv = { ...serviceEnv(8443) };
export type WebhookConfig = ReturnType<typeof loadWebhookConfig>;
export const loadWebhookConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(webhookEnv, env);
