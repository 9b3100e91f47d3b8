/**
 * The provider HTTP layer: one pooled undici client per provider, with timeouts, size limits, a request
 * authoriser at the last moment, per-operation cookie sessions (V3), trace headers, redaction, and every outcome
 * returned as data.
 */
export { createHttpClient, type HttpClient, type HttpMethod, type HttpDownload } from './http-client';
export { classifyTransportFailure, type HttpExchange, type ExchangePhase } from './exchange';
export { REQUEST_WRITTEN_CHANNEL, type RequestWrittenMessage } from './exchange-handler';
export { type HttpClientOptions } from './options';
export {
  CredentialUnavailableError,
  type Authorisation,
  type OutgoingRequest,
  type RequestAuthoriser,
} from './authoriser';
export { InvalidHttpOptionsError, InvalidHttpRequestError } from './errors';
export { REDACTED, createRedactionRules, redactHeaders, redactJson, redactText, redactUrl } from './redact';
export { traceHeaders, w3cTraceIdFor, newSpanId } from './trace-headers';
export { ProviderSession, MAX_SESSION_COOKIES, type HttpSession } from './cookie-jar';
