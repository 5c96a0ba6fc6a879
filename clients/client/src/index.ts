// svc-client: the typed client of the service's API (README.md).
import type { components, operations, paths } from './schema.ts';

export {
  createClient,
  type ApiMethod,
  type ClientOptions,
  type RawRequest,
  type RawResponse,
  type ResponseData,
  type SvcClient,
} from './client.ts';
export { ApiError, type FieldError } from './errors.ts';
export type { ListPath, PageOf } from './pagination.ts';
export { retryAfterMs, type TokenSource, type TransportOptions } from './transport.ts';
export { VERSION } from './version.ts';
export type { components, operations, paths };

type Schemas = components['schemas'];
export type Profile = Schemas['Profile'];
export type Team = Schemas['Team'];
export type Member = Schemas['Member'];
export type Invitation = Schemas['Invitation'];
export type Webhook = Schemas['WebhookSubscription'];
export type WebhookWithSecret = Schemas['WebhookSubscriptionWithSecret'];
export type WebhookDelivery = Schemas['WebhookDeliveryLogEntry'];
export type Problem = Schemas['Problem'];
