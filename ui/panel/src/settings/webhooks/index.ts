export { WebhookDetail, Webhooks } from './Webhooks';
