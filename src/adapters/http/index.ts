/**
 * The provider HTTP layer: one pooled undici client per provider, with timeouts, size limits, credential
 * injection at the last moment, per-operation cookie sessions (V3), trace headers, redaction, and every outcome
 * returned as data.
 */
export {
  createHttpClient,
  type HttpClient,
  type HttpRequest,
  type HttpMethod,
  type HttpDownload,
  type DownloadSink,
  type DownloadedBody,
} from './http-client';
export {
  HTTP_ERROR_CATEGORIES,
  classifyTransportFailure,
  type HttpErrorCategory,
  type HttpExchange,
  type RecordedRequest,
  type ExchangePhase,
} from './exchange';
export { REQUEST_WRITTEN_CHANNEL, type RequestWrittenMessage } from './exchange-handler';
export { type HttpClientOptions, type Credential, type CredentialHeader, type CredentialSupplier } from './options';
export { InvalidHttpOptionsError, InvalidHttpRequestError } from './errors';
export {
  REDACTED,
  DEFAULT_REDACTED_HEADERS,
  DEFAULT_REDACTED_FIELDS,
  DEFAULT_REDACTED_QUERY_PARAMS,
  DEFAULT_REDACTION_RULES,
  createRedactionRules,
  redactHeaders,
  redactJson,
  redactText,
  redactUrl,
  type RedactionConfig,
  type RedactionRules,
} from './redact';
export { traceHeaders, w3cTraceIdFor, newSpanId, type TraceHeaders } from './trace-headers';
export {
  ProviderSession,
  MAX_SESSION_COOKIES,
  MAX_SET_COOKIE_CHARS,
  type HttpSession,
  type ProviderSessionOptions,
} from './cookie-jar';
